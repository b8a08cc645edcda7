// Scope strings (RFC 6749 §3.3): space-delimited, case-sensitive tokens.
import { InvalidScope } from '../errors/index.ts';

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
