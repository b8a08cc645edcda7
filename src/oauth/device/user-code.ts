// User codes (RFC 8628 §6.1): what a person types on the verification page. Eight letters from an
// alphabet of twenty consonants, without vowels (no words spelt by chance) and without the letters
// read as digits (no 0/O, 1/I): 20^8 ≈ 2.6·10^10 codes, against guessing throttled per address, per
// code and per person (./verification.ts), and alive ten minutes. Shown as XXXX-XXXX; typed in any
// case, with or without the dash or spaces. Stored as a hash, as every code is.
import { randomInt } from 'node:crypto';
import { hashToken } from '../../tokens/opaque.ts';

/** The verification page (the verification_uri), under the issuer, where user codes are typed. */
export const VERIFICATION_PATH = '/device';

export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const LENGTH = 8;

/** A new user code, in its canonical form (eight letters, no dash). */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** The code as a person reads it: XXXX-XXXX. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, LENGTH / 2)}-${code.slice(LENGTH / 2)}`;
}

/**
 * What a person typed as a canonical code: upper case, without dashes and spaces; undefined when it
 * cannot be a code (its length or a letter outside the alphabet), which is then not looked up.
 */
export function normalizeUserCode(typed: string): string | undefined {
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== LENGTH) return undefined;
  for (const letter of code) if (!USER_CODE_ALPHABET.includes(letter)) return undefined;
  return code;
}

/** What the store keeps of a canonical code. */
export function userCodeHash(code: string): string {
  return hashToken(`user-code\n${code}`);
}
