// DPoP proofs (RFC 9449 §4): the one check of a proof, shared by the token endpoint, userinfo
// (src/oauth/dpop.ts adds the one-use `jti` and the nonces) and APIs (src/resource, which keeps its
// own `jti`s). Only jose and node:crypto, so that the resource module can take it as it is.
import { createHash } from 'node:crypto';
import { EmbeddedJWK, errors as joseErrors, jwtVerify, type JWK } from 'jose';
import { MAX_JTI } from '../store/one-time.ts';

/** dpop_signing_alg_values_supported: asymmetric only (§4.2); Ed25519 is what current libraries call EdDSA. */
export const DPOP_ALGS = ['ES256', 'RS256', 'PS256', 'EdDSA', 'Ed25519'];
/** How old a proof's `iat` may be, seconds (§11.1: a short window, the `jti` kept as long). */
export const DPOP_MAX_AGE = 300;
/** How far ahead of our clock a proof's `iat` may be, seconds. */
export const DPOP_CLOCK_SKEW = 60;
const MAX_PROOF = 8192;

/** What a proof states, once checked. */
export interface DpopProof {
  /** RFC 7638 thumbprint of the proof's key (SHA-256, base64url): a bound token's `cnf.jkt`. */
  jkt: string;
  jti: string;
  iat: number;
  /** The server's nonce it carries, if any (§8). */
  nonce: string | undefined;
}

export interface DpopExpectation {
  /** The request's method, e.g. POST. */
  method: string;
  /** The URL the request was sent to; its query and fragment are ignored (§4.3 item 9). */
  url: string;
  /** Epoch seconds. */
  now: number;
  /** At a protected resource: the access token the proof must hash in `ath` (§4.3 item 12). */
  accessToken?: string;
}

/** A proof that cannot be accepted; `message` says why (fixed texts, safe to send). */
export class DpopProofError extends Error {
  override get name(): string {
    return 'DpopProofError';
  }
}

/** §4.2 `ath`: base64url of the SHA-256 of the access token's ASCII. */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken).digest('base64url');
}

/** RFC 7638 §3.2: the members a thumbprint covers, in lexicographic order, per key type. */
const THUMBPRINT_MEMBERS: Record<string, readonly string[]> = {
  EC: ['crv', 'kty', 'x', 'y'],
  RSA: ['e', 'kty', 'n'],
  OKP: ['crv', 'kty', 'x'],
};

/**
 * RFC 7638: the SHA-256 thumbprint of a public JWK, base64url. Hashed here rather than by jose's
 * calculateJwkThumbprint, whose WebCrypto digest costs 25 times as much (bench/dpop.ts).
 */
export function jwkThumbprint(jwk: JWK): string {
  const members = THUMBPRINT_MEMBERS[jwk.kty ?? ''];
  if (!members) throw new DpopProofError('the DPoP proof key type is not supported');
  const required: Record<string, unknown> = {};
  for (const member of members) {
    const value = (jwk as Record<string, unknown>)[member];
    if (typeof value !== 'string') throw new DpopProofError('the DPoP proof key is incomplete');
    required[member] = value;
  }
  return createHash('sha256').update(JSON.stringify(required)).digest('base64url');
}

/** A URL as §4.3 compares `htu`: no query, no fragment, scheme and host as the URL parser writes them. */
function withoutQuery(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

/**
 * The DPoP header's value: one field holding one JWT (§4.3 items 1 and 2), else DpopProofError.
 * Fastify gives a repeated header as an array.
 */
export function singleProof(header: string | string[]): string {
  if (Array.isArray(header) || header.includes(',')) throw new DpopProofError('only one DPoP proof may be sent');
  if (header.length > MAX_PROOF) throw new DpopProofError('the DPoP proof is too long');
  return header;
}

/** §4.3: checks the proof's form, signature, `htm`, `htu`, `iat` and `ath`; the `jti` is the caller's. */
export async function verifyDpopProof(proof: string, expected: DpopExpectation): Promise<DpopProof> {
  let payload;
  let jwk: JWK;
  try {
    const verified = await jwtVerify(proof, EmbeddedJWK, {
      typ: 'dpop+jwt',
      algorithms: DPOP_ALGS,
      requiredClaims: ['jti', 'htm', 'htu', 'iat'],
    });
    payload = verified.payload;
    jwk = verified.protectedHeader.jwk!;
  } catch (err) {
    if (err instanceof joseErrors.JOSEError) throw new DpopProofError(`the DPoP proof is invalid (${err.code})`);
    throw err;
  }
  const { jti, htm, htu, iat, nonce, ath } = payload as Record<string, unknown>;
  if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI) {
    throw new DpopProofError('the DPoP proof jti must be a short string');
  }
  if (htm !== expected.method) throw new DpopProofError('the DPoP proof htm does not match the request method');
  const target = withoutQuery(expected.url);
  if (typeof htu !== 'string' || target === undefined || withoutQuery(htu) !== target) {
    throw new DpopProofError('the DPoP proof htu does not match the request URL');
  }
  if (typeof iat !== 'number' || iat > expected.now + DPOP_CLOCK_SKEW || iat < expected.now - DPOP_MAX_AGE) {
    throw new DpopProofError('the DPoP proof iat is not recent');
  }
  if (nonce !== undefined && typeof nonce !== 'string') throw new DpopProofError('the DPoP proof nonce is invalid');
  if (expected.accessToken !== undefined && ath !== accessTokenHash(expected.accessToken)) {
    throw new DpopProofError('the DPoP proof ath does not match the access token');
  }
  return { jkt: jwkThumbprint(jwk), jti, iat, nonce };
}
