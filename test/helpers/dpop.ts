// DPoP proofs made by hand (RFC 9449 §4.2), for the requests client libraries would never send: a
// replay, a wrong `ath`, `htm` or `htu`, a private key in the header.
import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type CryptoKey, type JWK, SignJWT } from 'jose';
import { accessTokenHash } from '../../src/tokens/dpop-proof.ts';

export interface DpopKey {
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
  /** RFC 7638 thumbprint of the public key: a bound token's cnf.jkt. */
  jkt: string;
}

export async function dpopKey(alg = 'ES256'): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { alg, privateKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
}

/** A proof for `htm` `htu`; `accessToken` adds its `ath`; `claims` and `header` override what is made. */
export async function dpopProof(
  key: DpopKey,
  htm: string,
  htu: string,
  options: { accessToken?: string; claims?: Record<string, unknown>; header?: Record<string, unknown> } = {},
): Promise<string> {
  const payload = {
    htm,
    htu,
    jti: randomUUID(),
    iat: Math.floor(Date.now() / 1000),
    ...(options.accessToken === undefined ? {} : { ath: accessTokenHash(options.accessToken) }),
    ...options.claims,
  };
  const header = { alg: key.alg, typ: 'dpop+jwt', jwk: key.jwk, ...options.header };
  return new SignJWT(payload).setProtectedHeader(header).sign(key.privateKey);
}
