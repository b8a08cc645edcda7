// OIDC Core §5.4: the claims each scope releases, for the ID token and userinfo; and the individual
// claims a claims parameter (§5.5) asks for. The user's claims held as JSON (./held-claims.ts) are
// parsed only when a scope or the claims parameter asks for one of them. And `roles`, the user's roles
// the client may see, for the ID token, userinfo and the access token.
import type { Client } from '../store/clients.ts';
import type { User } from '../store/users.ts';
import { type HeldClaims, parseHeldClaims, PROFILE_TEXT_CLAIMS } from './held-claims.ts';

/** The user's claims of each scope (§5.4), in the order they are released. */
export const SCOPE_CLAIMS: Readonly<Record<string, readonly string[]>> = {
  profile: ['name', 'family_name', 'given_name', 'preferred_username', ...PROFILE_TEXT_CLAIMS, 'updated_at'],
  email: ['email', 'email_verified'],
  address: ['address'],
  phone: ['phone_number', 'phone_number_verified'],
};

/** Each user's claim and the scope it falls under. */
export const CLAIM_SCOPES: ReadonlyMap<string, string> = new Map(
  Object.entries(SCOPE_CLAIMS).flatMap(([scope, claims]) => claims.map((claim) => [claim, scope] as const)),
);

/** The claims of one user being released: the held claims' JSON is parsed on the first asked for. */
interface Holder {
  user: User;
  held: HeldClaims | undefined;
}

function heldOf(holder: Holder): HeldClaims {
  return (holder.held ??= parseHeldClaims(holder.user.claims));
}

/** The value of one claim of the user, or undefined when they have none (never an empty string). */
function claimOf(holder: Holder, claim: string): unknown {
  const { user } = holder;
  switch (claim) {
    case 'name':
      return user.name ?? undefined;
    case 'given_name':
      return user.givenName ?? undefined;
    case 'family_name':
      return user.familyName ?? undefined;
    case 'preferred_username':
      return user.username;
    case 'updated_at':
      return user.updatedAt;
    // A user an upstream provider made without an email has none to release ('').
    case 'email':
      return user.email === '' ? undefined : user.email;
    case 'email_verified':
      return user.email === '' ? undefined : user.emailVerified;
    case 'phone_number_verified': {
      if (!user.claims) return undefined;
      const claims = heldOf(holder);
      return claims.phone_number === undefined ? undefined : claims.phone_number_verified === true;
    }
    default: {
      // Nothing held: the JSON is not there to parse.
      if (!user.claims) return undefined;
      const value = heldOf(holder)[claim as keyof HeldClaims];
      return value === '' ? undefined : value;
    }
  }
}

/**
 * The user's roles a client may see: those among its allowed roles (`clients update --roles`), all
 * of them when it has none set.
 */
export function visibleRoles(user: Pick<User, 'roles'>, client: Pick<Client, 'allowedRoles'>): string[] {
  const allowed = client.allowedRoles;
  return allowed ? user.roles.filter((role) => allowed.includes(role)) : [...user.roles];
}

/**
 * The claims of `user` that `scopes` release, and the individual claims `requested` names (a claims
 * parameter's member, already limited to what the client may learn), those the user has. Called per
 * token: the scopes' claims are walked in their order, and no list or closure is made for them.
 */
export function claimsForScopes(
  user: User,
  scopes: readonly string[],
  client: Pick<Client, 'allowedRoles'>,
  requested: readonly string[] = [],
): Record<string, unknown> {
  const holder: Holder = { user, held: undefined };
  const released: Record<string, unknown> = {};
  let roles = false;
  for (const scope of scopes) {
    if (scope === 'roles') roles = true;
    const claims = SCOPE_CLAIMS[scope];
    if (claims === undefined) continue;
    for (const claim of claims) {
      const value = claimOf(holder, claim);
      if (value !== undefined) released[claim] = value;
    }
  }
  for (const claim of requested) {
    if (claim in released) continue;
    const value = claimOf(holder, claim);
    if (value !== undefined) released[claim] = value;
  }
  // An array, left out when there is no role to tell (never an empty string, which some apps map to a role).
  if (roles) {
    const visible = visibleRoles(user, client);
    if (visible.length > 0) released.roles = visible;
  }
  return released;
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
  ...CLAIM_SCOPES.keys(),
  'roles',
];
