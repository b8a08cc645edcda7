// Time-based one-time passwords (RFC 6238, over HOTP, RFC 4226) as authenticator apps make them: six
// digits, a 30-second step, HMAC-SHA-1, with node:crypto; the secret as base32 (RFC 4648 §6) in an
// `otpauth://totp/…` URI (Google Authenticator's Key Uri Format, which every app reads).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const TOTP_DIGITS = 6;
export const TOTP_PERIOD = 30;
/** Steps of clock skew accepted either way (RFC 6238 §5.2 recommends at most one). */
export const TOTP_WINDOW = 1;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** The bytes of a base32 secret, spaces, dashes and padding ignored, any case; undefined when malformed. */
export function base32Decode(text: string): Buffer | undefined {
  const clean = text.replace(/[\s=-]/g, '').toUpperCase();
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of clean) {
    const index = ALPHABET.indexOf(char);
    if (index < 0) return undefined;
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new secret: 160 random bits (RFC 4226 §4 recommends them), base32. */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(20));
}

/** The time step of an epoch second. */
export function timeStep(now: number): number {
  return Math.floor(now / TOTP_PERIOD);
}

/** The code of `step` (RFC 4226 §5.3: dynamic truncation, then modulo 10^6). */
export function totpCode(secret: Buffer, step: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', secret).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** TOTP_DIGITS).padStart(TOTP_DIGITS, '0');
}

/** A code as typed: digits only (apps show "123 456"); undefined when it is not six digits. */
export function typedCode(typed: string | undefined): string | undefined {
  const digits = (typed ?? '').replace(/[\s-]/g, '');
  return /^\d{6}$/.test(digits) ? digits : undefined;
}

/**
 * The step whose code `code` is, within TOTP_WINDOW steps of `now`, or undefined. Every step in the
 * window is compared, in constant time, whichever matches.
 */
export function matchingStep(secret: string, code: string, now: number): number | undefined {
  const key = base32Decode(secret);
  if (!key || key.length === 0) return undefined;
  const current = timeStep(now);
  let found: number | undefined;
  for (let step = current - TOTP_WINDOW; step <= current + TOTP_WINDOW; step++) {
    const expected = Buffer.from(totpCode(key, step));
    if (timingSafeEqual(expected, Buffer.from(code.padEnd(TOTP_DIGITS).slice(0, TOTP_DIGITS)))) found ??= step;
  }
  return found;
}

/**
 * The `otpauth://totp/…` URI of a secret: the label is the issuer and the account, the parameters
 * say the algorithm, digits and period outright (some apps assume nothing).
 */
export function otpauthUri(input: { issuer: string; account: string; secret: string }): string {
  const label = `${encodeURIComponent(input.issuer)}:${encodeURIComponent(input.account)}`;
  const params = new URLSearchParams({
    secret: input.secret,
    issuer: input.issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_PERIOD),
  });
  return `otpauth://totp/${label}?${params.toString()}`;
}
