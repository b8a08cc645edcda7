// Opaque credentials (codes, refresh tokens, session cookies, client secrets) and their stored form.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

// Random bytes are drawn from the CSPRNG 4 KiB at a time: one call per ~170 tokens instead of one
// each (a call costs ≈ 6 µs however few bytes it returns). Each byte is handed out once.
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let offset = POOL_SIZE;

/** `bytes` bytes from the CSPRNG, through the pool; the buffer is the caller's (the pool is not reused). */
export function random(bytes: number): Buffer {
  if (bytes > POOL_SIZE) return randomBytes(bytes);
  if (offset + bytes > pool.length) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  const out = pool.subarray(offset, offset + bytes);
  offset += bytes;
  return out;
}

/** 256 random bits, base64url: 43 characters. */
export function randomToken(bytes = 32): string {
  return random(bytes).toString('base64url');
}

/**
 * The stored form of an opaque credential: SHA-256, hex. crypto.hash, one call with no Hash object,
 * costs half of createHash().update().digest() for a value this short.
 */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Constant-time comparison of two hex digests (or any equal-length strings). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/**
 * Application-generated identifiers shared by SQLite and PostgreSQL (no database functions). Never
 * starting with `-` or `_`: a client id is typed on command lines (`tessera clients delete ID`,
 * `--client ID`), where a leading `-` reads as an option.
 */
export function newId(): string {
  const id = random(16).toString('base64url');
  const first = id.charCodeAt(0);
  return first === 45 || first === 95 ? newId() : id;
}

/** 48 bits of milliseconds in hex: a prefix under which newer values sort after older ones. */
function timePrefix(now: number): string {
  return now.toString(16).padStart(12, '0');
}

/**
 * An identifier that sorts by creation time: 48 bits of milliseconds in hex, then 96 random bits.
 * New rows' keys then land together at the end of their B-tree index instead of on a random page
 * each, which keeps the pages a commit writes few when a table holds millions of rows.
 */
export function newSortableId(now = Date.now()): string {
  return `${timePrefix(now)}${random(12).toString('base64url')}`;
}
