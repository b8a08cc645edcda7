// Values that travel through the browser and come back unaltered: JSON, base64url, HMAC-SHA-256
// under a key derived from TESSERA_SECRET for one purpose, with an expiry (Sealer), or encrypted as
// well (SealedBox). Both seal under the newest secret and open under any of the keyring's
// (./secrets.ts), the newest first.
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import { random, safeEqual } from './opaque.ts';
import { type Secrets, secretList } from './secrets.ts';

/**
 * The key for one purpose, derived from TESSERA_SECRET with HKDF, as a KeyObject: createHmac given
 * raw bytes imports them on every call (≈ 11 µs), a KeyObject is imported once.
 */
export function purposeKey(secret: string, purpose: string): KeyObject {
  return createSecretKey(Buffer.from(hkdfSync('sha256', secret, 'tessera', purpose, 32)));
}

/** The purpose's key under each secret of the keyring, newest first. */
export function purposeKeys(secrets: Secrets, purpose: string): KeyObject[] {
  return secretList(secrets).map((secret) => purposeKey(secret, purpose));
}

/** Whether `mac` is HMAC-SHA-256 of `body` under one of `keys` (base64url), trying them in order. */
export function macMatches(keys: readonly KeyObject[], body: string, mac: string): boolean {
  return keys.some((key) => safeEqual(createHmac('sha256', key).update(body).digest('base64url'), mac));
}

export class Sealer<T extends { exp: number }> {
  readonly #keys: KeyObject[];
  constructor(secrets: Secrets, purpose: string) {
    this.#keys = purposeKeys(secrets, purpose);
  }

  seal(value: T): string {
    const body = Buffer.from(JSON.stringify(value)).toString('base64url');
    return `${body}.${createHmac('sha256', this.#keys[0]!).update(body).digest('base64url')}`;
  }

  /** The value, or undefined when tampered with, sealed for another purpose, malformed or expired. */
  open(sealed: string, now: number): T | undefined {
    const dot = sealed.indexOf('.');
    if (dot <= 0) return undefined;
    const body = sealed.slice(0, dot);
    if (!macMatches(this.#keys, body, sealed.slice(dot + 1))) return undefined;
    try {
      const value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T;
      return value.exp > now ? value : undefined;
    } catch {
      return undefined;
    }
  }
}

/**
 * Values that must also stay unread on their way through the browser: AES-256-GCM under a key of
 * the hour, HMAC-SHA-256(purpose key, hour), with a random 96-bit IV. A key per hour keeps the number
 * of values sealed under one key far below GCM's limit for random IVs (2^32) at any rate of issue,
 * and the hour keys are derived once and kept. Format: base64url(hour ‖ IV ‖ ciphertext ‖ tag),
 * the hour a 32-bit count since 1970. Values sealed more than MAX_AGE_HOURS ago no longer open.
 */
export class SealedBox<T> {
  /** Per secret of the keyring, newest first: its purpose key and the hour keys derived from it. */
  readonly #keys: Array<{ key: KeyObject; hours: Map<number, KeyObject> }>;
  constructor(secrets: Secrets, purpose: string) {
    this.#keys = purposeKeys(secrets, purpose).map((key) => ({ key, hours: new Map() }));
  }

  seal(value: T, nowMs = Date.now()): string {
    const hour = Math.floor(nowMs / HOUR_MS);
    const head = Buffer.allocUnsafe(4);
    head.writeUInt32BE(hour, 0);
    const { iv, ciphertext, tag } = gcmEncrypt(this.#hourKey(0, hour), JSON.stringify(value));
    return Buffer.concat([head, iv, ciphertext, tag]).toString('base64url');
  }

  /** The value, or undefined when tampered with, sealed under another secret or purpose, too old, or malformed. */
  open(sealed: string, nowMs = Date.now()): T | undefined {
    if (sealed.length > MAX_SEALED || !BASE64URL.test(sealed)) return undefined;
    const raw = Buffer.from(sealed, 'base64url');
    if (raw.length < HEAD_BYTES + TAG_BYTES + 2) return undefined;
    const hour = raw.readUInt32BE(0);
    const current = Math.floor(nowMs / HOUR_MS);
    if (hour > current + 1 || hour < current - MAX_AGE_HOURS) return undefined;
    const iv = raw.subarray(4, HEAD_BYTES);
    const ciphertext = raw.subarray(HEAD_BYTES, raw.length - TAG_BYTES);
    const tag = raw.subarray(raw.length - TAG_BYTES);
    // The newest secret first: a previous one is tried only for what it sealed before a rotation.
    let plain: string | undefined;
    for (let i = 0; plain === undefined && i < this.#keys.length; i++)
      plain = gcmDecrypt(this.#hourKey(i, hour), iv, ciphertext, tag);
    try {
      return plain === undefined ? undefined : (JSON.parse(plain) as T);
    } catch {
      return undefined;
    }
  }

  /** The hour key of the keyring's `index`-th secret. */
  #hourKey(index: number, hour: number): KeyObject {
    const { key: purpose, hours } = this.#keys[index]!;
    let key = hours.get(hour);
    if (!key) {
      const info = Buffer.alloc(4);
      info.writeUInt32BE(hour, 0);
      key = createSecretKey(createHmac('sha256', purpose).update(info).digest());
      // Only hours that can still open are kept: at most MAX_AGE_HOURS + 2 keys per secret.
      for (const known of hours.keys()) if (Math.abs(known - hour) > MAX_AGE_HOURS + 1) hours.delete(known);
      hours.set(hour, key);
    }
    return key;
  }
}

/** AES-256-GCM with a random 96-bit IV: what SealedBox and the signing keys' storage encrypt with. */
export function gcmEncrypt(
  key: KeyObject | Buffer,
  plaintext: string,
): { iv: Buffer; ciphertext: Buffer; tag: Buffer } {
  const iv = random(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { iv, ciphertext, tag: cipher.getAuthTag() };
}

/** The plaintext, or undefined when the ciphertext was altered or sealed under another key. */
export function gcmDecrypt(key: KeyObject | Buffer, iv: Buffer, ciphertext: Buffer, tag: Buffer): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

const HOUR_MS = 3_600_000;
const MAX_AGE_HOURS = 24;
const IV_BYTES = 12;
const HEAD_BYTES = 4 + IV_BYTES;
const TAG_BYTES = 16;
const MAX_SEALED = 8192;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
