// JWT access tokens (RFC 9068) and ID tokens (OIDC Core §2), signed with the key store's keys.
import { hash, sign as cryptoSign } from 'node:crypto';
import { jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import { InvalidToken } from '../errors/index.ts';
import type { KeyStore, SigningAlg, SigningKey } from './keystore.ts';
import { spans } from '../telemetry/spans.ts';
import { newId } from './opaque.ts';

/**
 * Seconds of clock difference tolerated in the JWTs others sign and send us: client assertions,
 * request objects, ID-JAGs.
 */
export const CLOCK_TOLERANCE = 30;

export interface AccessTokenInput {
  issuer: string;
  audience: string;
  subject: string;
  clientId: string;
  scope: string;
  /** The grant (with a user); absent for a client's own token (client_credentials): `sub` is the client. */
  grantId?: string;
  /** When the user signed in; absent without a user. */
  authTime?: number;
  /** The user's roles the client may see (the `roles` scope); left out when absent or empty. */
  roles?: readonly string[];
  /** The thumbprint of the DPoP key the token is bound to (RFC 9449 §6.1 `cnf.jkt`); absent: a Bearer token. */
  jkt?: string;
  /** RFC 8693 §4.1: who acts for the subject (a token exchange's), the earlier actors nested. */
  act?: Actor;
  now: number;
  ttl: number;
  alg: SigningAlg;
}

/** RFC 8693 §4.1: the acting party, and within it the one that acted before it, if any. */
export interface Actor {
  sub: string;
  act?: Actor;
}

/**
 * A compact JWS (RFC 7515 §7.1) signed with node:crypto: RS256 is RSASSA-PKCS1-v1_5 with SHA-256,
 * ES256 is ECDSA P-256 with SHA-256 and the signature as R || S (RFC 7518 §3.4).
 *
 * An RS256 signature (≈ 240 µs of CPU) runs on libuv's thread pool, beside the event loop
 * (bench/RESULTS.md: +28 % flows/s). An ES256 one is made on the spot: handed to the pool it costs
 * ≈ 70 µs of CPU in all, most of it the hand-off, against ≈ 25 µs here. Node is asked for the DER
 * form with the bare key and the R || S form is taken from it (ecdsaDerToJose): both the options
 * object `{ key, dsaEncoding: 'ieee-p1363' }` and Node's own conversion cost as much again as the
 * signature itself (bench/RESULTS.md, item 10).
 */
export function signJws(key: SigningKey, typ: string, payload: JWTPayload): Promise<string> {
  // Traced when tracing is on (src/telemetry); one property read when it is off.
  const tracing = spans.active;
  if (tracing === undefined) return sign(key, typ, payload);
  return tracing.span(`sign ${typ}`, { 'tessera.signing.alg': key.alg, 'tessera.signing.kid': key.kid }, () =>
    sign(key, typ, payload),
  );
}

async function sign(key: SigningKey, typ: string, payload: JWTPayload): Promise<string> {
  const input = `${encodedHeader(key, typ)}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  const data = Buffer.from(input);
  const signature =
    key.alg === 'ES256'
      ? ecdsaDerToJose(cryptoSign('sha256', data, key.privateKey), 32)
      : await new Promise<Buffer>((resolve, reject) => {
          cryptoSign('sha256', data, key.privateKey, (err, result) => (err ? reject(err) : resolve(result)));
        });
  return `${input}.${signature.toString('base64url')}`;
}

/**
 * An ECDSA-Sig-Value (SEQUENCE of two INTEGERs, DER, as OpenSSL makes it) as the fixed-width R || S
 * of RFC 7518 §3.4, each half `size` bytes: a leading zero octet is dropped, a short value padded.
 */
export function ecdsaDerToJose(der: Buffer, size: number): Buffer {
  const out = Buffer.alloc(size * 2);
  if (der[0] !== 0x30 || der[1] !== der.length - 2 || der[1] >= 0x80) throw new Error('not a DER ECDSA signature');
  let at = 2;
  for (let half = 0; half < 2; half++) {
    if (der[at] !== 0x02) throw new Error('not a DER ECDSA signature');
    let length = der[at + 1];
    let start = at + 2;
    const next = start + length;
    if (next > der.length) throw new Error('not a DER ECDSA signature');
    while (length > size && der[start] === 0) {
      start++;
      length--;
    }
    if (length > size) throw new Error('ECDSA signature value too long');
    der.copy(out, half * size + size - length, start, start + length);
    at = next;
  }
  if (at !== der.length) throw new Error('not a DER ECDSA signature');
  return out;
}

/** The protected header's encoding is the same for every token of a key and type. */
const headers = new Map<string, string>();
function encodedHeader(key: SigningKey, typ: string): string {
  const id = `${key.kid}\n${typ}`;
  let header = headers.get(id);
  if (header === undefined) {
    header = Buffer.from(JSON.stringify({ alg: key.alg, typ, kid: key.kid })).toString('base64url');
    if (headers.size > 100) headers.clear();
    headers.set(id, header);
  }
  return header;
}

export async function signAccessToken(keys: KeyStore, input: AccessTokenInput): Promise<string> {
  return signJws(keys.signingKey(input.alg), 'at+jwt', {
    iss: input.issuer,
    sub: input.subject,
    aud: input.audience,
    client_id: input.clientId,
    scope: input.scope,
    auth_time: input.authTime,
    // Lets userinfo, revocation and introspection find the token's family without storing each token.
    grant_id: input.grantId,
    ...(input.roles && input.roles.length > 0 ? { roles: input.roles } : {}),
    ...(input.jkt !== undefined ? { cnf: { jkt: input.jkt } } : {}),
    ...(input.act ? { act: input.act } : {}),
    iat: input.now,
    exp: input.now + input.ttl,
    jti: newId(),
  });
}

/** OIDC Core §3.1.3.6: left half of the SHA-256 of the access token (RS256 and ES256 both use SHA-256). */
export function atHash(accessToken: string): string {
  const digest = hash('sha256', accessToken, 'buffer');
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

export interface IdTokenInput {
  issuer: string;
  subject: string;
  clientId: string;
  authTime: number;
  /** RFC 8176 methods of the sign-in; left out when empty. */
  amr: readonly string[];
  /** The sign-in's level (OIDC Core §2); left out when null. */
  acr: string | null;
  /** The browser session's id (OIDC `sid`, Back-Channel Logout 1.0 §2.1); null: none. */
  sid?: string | null;
  nonce: string | null;
  accessToken: string;
  claims: Record<string, unknown>;
  now: number;
  ttl: number;
  alg: SigningAlg;
}

export async function signIdToken(keys: KeyStore, input: IdTokenInput): Promise<string> {
  const payload: JWTPayload = {
    ...input.claims,
    iss: input.issuer,
    sub: input.subject,
    aud: input.clientId,
    iat: input.now,
    exp: input.now + input.ttl,
    auth_time: input.authTime,
    at_hash: atHash(input.accessToken),
    // OIDC Core §2: azp when the ID token has a single audience that is the client is optional;
    // Tessera always sets it so relying parties need not special-case it.
    azp: input.clientId,
  };
  if (input.nonce !== null) payload.nonce = input.nonce;
  if (input.amr.length > 0) payload.amr = [...input.amr];
  if (input.acr !== null) payload.acr = input.acr;
  if (input.sid) payload.sid = input.sid;
  return signJws(keys.signingKey(input.alg), 'JWT', payload);
}

export interface AccessTokenClaims {
  sub: string;
  /** The default audience, or the API the token is for (RFC 8707). */
  aud: string;
  client_id: string;
  scope: string;
  /** Absent from a client's own token (client_credentials): no grant, no user, `sub` is the client. */
  grant_id?: string;
  /** The user's roles, with the `roles` scope (./claims.ts). */
  roles?: string[];
  /** RFC 9449 §6.1: the DPoP key the token is bound to. */
  cnf?: { jkt?: string };
  /** The actor of an exchanged token (RFC 8693 §4.1). */
  act?: Actor;
  /** When the user signed in; absent without a user. */
  auth_time?: number;
  jti: string;
  iat: number;
  exp: number;
}

/**
 * Access tokens already verified, per key store: a client presents the same token again and again
 * until it expires, and checking the signature each time (an ECDSA or RSA verification) is the
 * largest cost of a userinfo or introspection request. An entry is used only while its key is still
 * published and the token has not expired; revocation is checked by the callers every time.
 */
const VERIFIED_MAX = 10_000;
const verifiedTokens = new WeakMap<KeyStore, Map<string, { claims: AccessTokenClaims; kid: string; issuer: string }>>();

/**
 * Verifies one of our own access tokens; any failure is RFC 6750 `invalid_token`. `audience` null
 * accepts a token for any audience (introspection and revocation answer for every API's tokens).
 */
export async function verifyAccessToken(
  keys: KeyStore,
  token: string,
  expected: { issuer: string; audience: string | null; now: number },
): Promise<AccessTokenClaims> {
  let verified = verifiedTokens.get(keys);
  if (!verified) verifiedTokens.set(keys, (verified = new Map()));
  const hit = verified.get(token);
  if (hit && hit.issuer === expected.issuer && keys.verificationKey(hit.kid)) {
    if (expected.audience !== null && hit.claims.aud !== expected.audience) {
      throw new InvalidToken('the access token is for another audience');
    }
    if (hit.claims.exp <= expected.now) {
      verified.delete(token);
      throw new InvalidToken('the access token has expired');
    }
    return hit.claims;
  }
  const signer = keys.signerOf(token);
  if (signer === 'malformed') throw new InvalidToken('the access token is malformed');
  if (!signer) throw new InvalidToken('the access token is not signed by a known key');
  const { kid, key } = signer;
  let claims: AccessTokenClaims;
  try {
    const { payload } = await jwtVerify(token, key, {
      issuer: expected.issuer,
      ...(expected.audience !== null ? { audience: expected.audience } : {}),
      typ: 'at+jwt',
      algorithms: ['RS256', 'ES256'],
      currentDate: new Date(expected.now * 1000),
      requiredClaims: ['sub', 'aud', 'exp', 'iat', 'jti', 'client_id', 'scope'],
    });
    // Tessera's access tokens have one audience, a string.
    if (typeof payload.aud !== 'string') throw new InvalidToken('the access token is invalid');
    claims = payload as unknown as AccessTokenClaims;
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw new InvalidToken('the access token has expired');
    throw new InvalidToken('the access token is invalid');
  }
  // The oldest entry makes room: a flood of valid tokens cannot grow the map past VERIFIED_MAX.
  if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value!);
  verified.set(token, { claims, kid, issuer: expected.issuer });
  return claims;
}
