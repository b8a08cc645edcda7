// User passwords: argon2id (RFC 9106) with Node's built-in crypto.argon2, stored as a PHC string.
import { argon2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { normalizePassword } from './rules.ts';

const argon2Async = promisify(argon2);

// RFC 9106 §4 second recommended option, lowered to OWASP's 19 MiB / t=2 floor for interactive login.
const PARAMS = { memory: 19_456, passes: 2, parallelism: 1, tagLength: 32 } as const;

export async function hashPassword(password: string): Promise<string> {
  const nonce = randomBytes(16);
  const tag = await argon2Async('argon2id', { message: normalizePassword(password), nonce, ...PARAMS });
  const { memory: m, passes: t, parallelism: p } = PARAMS;
  return `$argon2id$v=19$m=${m},t=${t},p=${p}$${nonce.toString('base64url')}$${tag.toString('base64url')}`;
}

const PHC = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

/** Passwords checked so far in this process: what throttling saves is checks not made (its tests count them). */
let verified = 0;
export function passwordStats(): { verified: number } {
  return { verified };
}

export async function verifyPassword(password: string, phc: string): Promise<boolean> {
  verified++;
  const m = PHC.exec(phc);
  if (!m) return false;
  const expected = Buffer.from(m[5]!, 'base64url');
  const tag = await argon2Async('argon2id', {
    message: normalizePassword(password),
    nonce: Buffer.from(m[4]!, 'base64url'),
    memory: Number(m[1]),
    passes: Number(m[2]),
    parallelism: Number(m[3]),
    tagLength: expected.length,
  });
  return timingSafeEqual(tag, expected);
}

/** A hash of a random password, to spend the same time when the username is unknown. */
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  return dummyHash;
}
