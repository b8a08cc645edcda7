// Recovery codes: ten single-use codes a user keeps on paper for the day they lose their
// authenticator app or passkey (NIST SP 800-63B §5.1.2, look-up secrets). Each is 80 random bits,
// shown once as sixteen base32 letters and digits in groups of four, and stored as the SHA-256 of
// the user's id and the code: 80 bits are out of reach of a search, so a fast hash suffices, and the
// user's id makes each hash good for one user only.
import { createHash, randomBytes } from 'node:crypto';
import { base32Encode } from '../totp/code.ts';

export const RECOVERY_CODE_COUNT = 10;

/** Ten new codes, as the user is shown them: `abcd-efgh-ijkl-mnop`. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () =>
    base32Encode(randomBytes(10))
      .toLowerCase()
      .replace(/(.{4})(?!$)/g, '$1-'),
  );
}

/** A code as typed: lowercase, without spaces or dashes; undefined when it cannot be one. */
export function typedRecoveryCode(typed: string | undefined): string | undefined {
  const clean = (typed ?? '').replace(/[\s-]/g, '').toLowerCase();
  return /^[a-z2-7]{16}$/.test(clean) ? clean : undefined;
}

/** What is stored of a user's code (as typed or as shown). */
export function recoveryCodeHash(userId: string, code: string): string {
  const clean = code.replace(/[\s-]/g, '').toLowerCase();
  return createHash('sha256').update(`${userId}\n${clean}`).digest('hex');
}
