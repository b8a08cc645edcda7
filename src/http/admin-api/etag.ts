// ETags of the admin API's objects: a hash of the object's JSON representation, as a strong entity
// tag (RFC 9110 §8.8.3), so any change to what a GET shows changes it, and nothing else does. A
// PATCH or DELETE with an If-Match naming none of the current representation's tags gets 412
// (RFC 9110 §13.1.1); without If-Match it goes ahead (the header is the caller's choice).
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { Problem } from './problems.ts';

export function etagOf(representation: unknown): string {
  const hash = createHash('sha256').update(JSON.stringify(representation)).digest('base64url');
  return `"${hash.slice(0, 27)}"`;
}

/** Throws 412 when the request's If-Match does not match `representation` (strong comparison: W/ never matches). */
export function checkIfMatch(request: FastifyRequest, representation: unknown): void {
  const header = request.headers['if-match'];
  if (header === undefined) return;
  if (header.trim() === '*') return;
  const current = etagOf(representation);
  const tags = header.split(',').map((tag) => tag.trim());
  if (!tags.includes(current))
    throw new Problem(412, 'precondition-failed', 'the object changed since it was read (If-Match): read it again');
}
