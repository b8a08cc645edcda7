// Proof Key for Code Exchange (RFC 7636), S256 only.
import { hash } from 'node:crypto';
import { safeEqual } from '../tokens/opaque.ts';

/** RFC 7636 §4.1/§4.2: 43–128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~". */
const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

export function isWellFormedPkceValue(value: string): boolean {
  return PKCE_VALUE.test(value);
}

/** RFC 7636 §4.2: the S256 code_challenge of a verifier, BASE64URL(SHA256(ASCII(code_verifier))). */
export function s256Challenge(codeVerifier: string): string {
  return hash('sha256', codeVerifier, 'base64url');
}

/**
 * RFC 7636 §4.6: s256Challenge(code_verifier) == code_challenge. A verifier outside §4.1's
 * characters never matches (and, all ASCII, its UTF-8 is its ASCII).
 */
export function verifyS256(codeVerifier: string, codeChallenge: string): boolean {
  if (!isWellFormedPkceValue(codeVerifier)) return false;
  return safeEqual(s256Challenge(codeVerifier), codeChallenge);
}
