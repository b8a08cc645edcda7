// Scope strings (RFC 6749 §3.3): space-delimited, case-sensitive tokens; which of them speak of the
// user rather than an API; and who may hold the `admin` scope.
import { AccessDenied, InvalidScope } from '../errors/index.ts';
import type { Client } from '../store/clients.ts';
import { ADMIN_ROLE, type User } from '../store/users.ts';

/** Scopes about the user rather than an API: a client acting for itself cannot have them. */
export const USER_SCOPES: readonly string[] = ['openid', 'profile', 'email', 'roles'];

/**
 * The scope of Tessera's admin API. Never granted through consent or registration alone: only to a
 * client the operator marked (`clients create|update --admin`), and, at the authorization endpoint,
 * only for a user with the admin role (`users update --admin`).
 */
export const ADMIN_SCOPE = 'admin';

export const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

export function parseScope(value: string): string[] {
  const scopes = value.split(' ').filter((s) => s !== '');
  for (const scope of scopes) {
    if (!SCOPE_TOKEN.test(scope)) {
      throw new InvalidScope(
        'scope has a character RFC 6749 does not allow in a scope',
        `scope ${JSON.stringify(scope)}`,
      );
    }
  }
  return [...new Set(scopes)];
}

/** Every requested scope must be one the client is registered for. */
export function checkAllowedScopes(requested: readonly string[], allowed: readonly string[]): void {
  const notAllowed = requested.filter((s) => !allowed.includes(s));
  if (notAllowed.length > 0) {
    throw new InvalidScope(
      'scope asks for more than the client is registered for',
      `not allowed: ${notAllowed.join(' ')}`,
    );
  }
}

export function formatScope(scopes: readonly string[]): string {
  return scopes.join(' ');
}

/** RFC 6749 §3.3: a client not marked admin may not ask for the admin scope, whatever it registered. */
export function checkAdminClient(scopes: readonly string[], client: Pick<Client, 'admin'>): void {
  if (scopes.includes(ADMIN_SCOPE) && client.admin !== true)
    throw new InvalidScope('the admin scope is only for clients the operator marks as admin clients');
}

/** RFC 6749 §4.1.2.1: the admin scope is refused, not consented to, for a user without the admin role. */
export function checkAdminUser(scopes: readonly string[], user: Pick<User, 'roles'>): void {
  if (scopes.includes(ADMIN_SCOPE) && !user.roles.includes(ADMIN_ROLE))
    throw new AccessDenied('the admin scope is only for users with the admin role');
}
