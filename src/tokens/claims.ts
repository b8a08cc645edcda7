// OIDC Core §5.4: the claims each scope releases, for the ID token and userinfo; and `roles`, the
// user's roles the client may see, for the ID token, userinfo and the access token.
import type { Client } from '../store/clients.ts';
import type { User } from '../store/users.ts';

/**
 * The user's roles a client may see: those among its allowed roles (`clients update --roles`), all
 * of them when it has none set.
 */
export function visibleRoles(user: Pick<User, 'roles'>, client: Pick<Client, 'allowedRoles'>): string[] {
  const allowed = client.allowedRoles;
  return allowed ? user.roles.filter((role) => allowed.includes(role)) : [...user.roles];
}

export function claimsForScopes(
  user: User,
  scopes: readonly string[],
  client: Pick<Client, 'allowedRoles'>,
): Record<string, unknown> {
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
  // An array, left out when there is no role to tell (never an empty string, which some apps map to a role).
  if (scopes.includes('roles')) {
    const roles = visibleRoles(user, client);
    if (roles.length > 0) claims.roles = roles;
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
  'roles',
];
