// OIDC Core §5.4: the claims each scope releases, for the ID token and userinfo.
import type { User } from '../store/users.ts';

export function claimsForScopes(user: User, scopes: readonly string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  if (scopes.includes('profile')) {
    if (user.name !== null) claims.name = user.name;
    if (user.givenName !== null) claims.given_name = user.givenName;
    if (user.familyName !== null) claims.family_name = user.familyName;
    claims.preferred_username = user.username;
    claims.updated_at = user.updatedAt;
  }
  // A user an upstream provider made without an email has none to release ('').
  if (scopes.includes('email') && user.email !== '') {
    claims.email = user.email;
    claims.email_verified = user.emailVerified;
  }
  return claims;
}

export const SUPPORTED_CLAIMS = [
  'sub',
  'iss',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'amr',
  'acr',
  'nonce',
  'at_hash',
  'azp',
  'name',
  'given_name',
  'family_name',
  'preferred_username',
  'updated_at',
  'email',
  'email_verified',
];
