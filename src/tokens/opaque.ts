// Opaque credentials (codes, refresh tokens, session cookies, client secrets) and their stored form.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 256 random bits, base64url: 43 characters. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** The stored form of an opaque credential: SHA-256, hex. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Constant-time comparison of two hex digests (or any equal-length strings). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/** Application-generated identifiers shared by SQLite and PostgreSQL (no database functions). */
export function newId(): string {
  return randomBytes(16).toString('base64url');
}
