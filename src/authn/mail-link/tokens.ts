// The tokens of mails' links: 256 random bits, stored as their SHA-256 only (src/store/mails.ts), each
// for one purpose, single use and short-lived; a reset's is also bound to the password it was issued
// under (its stamp), so that any change of password, by any route, kills it.
import { hash } from 'node:crypto';
import { hashToken, randomToken } from '../../tokens/opaque.ts';

/** Seconds each kind of link lives. */
export const LINK_TTL = { reset: 30 * 60, invite: 7 * 24 * 3600, verify: 24 * 3600, signup: 24 * 3600 } as const;

/** A new link token and its stored form. */
export function newLinkToken(): { token: string; hash: string } {
  const token = randomToken();
  return { token, hash: hashToken(token) };
}

/** The stored form of a token a link carried, or undefined when it cannot be one. */
export function linkTokenHash(token: string | undefined): string | undefined {
  return token && /^[A-Za-z0-9_-]{43}$/.test(token) ? hashToken(token) : undefined;
}

/** What a reset is bound to: a digest of the password hash (a new password has a new salt, so a new stamp). */
export function passwordStamp(passwordHash: string | null): string {
  return hash('sha256', `tessera password stamp\n${passwordHash ?? ''}`, 'hex').slice(0, 32);
}
