// Values that travel through the browser and come back unaltered: JSON, base64url, HMAC-SHA-256
// under a key derived from TESSERA_SECRET for one purpose, with an expiry.
import { createHmac, hkdfSync } from 'node:crypto';
import { safeEqual } from './opaque.ts';

export class Sealer<T extends { exp: number }> {
  readonly #key: Buffer;
  constructor(secret: string, purpose: string) {
    this.#key = Buffer.from(hkdfSync('sha256', secret, 'tessera', purpose, 32));
  }

  seal(value: T): string {
    const body = Buffer.from(JSON.stringify(value)).toString('base64url');
    return `${body}.${this.#mac(body)}`;
  }

  /** The value, or undefined when tampered with, sealed for another purpose, malformed or expired. */
  open(sealed: string, now: number): T | undefined {
    const dot = sealed.indexOf('.');
    if (dot <= 0) return undefined;
    const body = sealed.slice(0, dot);
    if (!safeEqual(this.#mac(body), sealed.slice(dot + 1))) return undefined;
    try {
      const value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T;
      return value.exp > now ? value : undefined;
    } catch {
      return undefined;
    }
  }

  #mac(body: string): string {
    return createHmac('sha256', this.#key).update(body).digest('base64url');
  }
}
