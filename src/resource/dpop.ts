// DPoP-bound access tokens at an API (RFC 9449 §7.1): the proof checked by the same function as
// Tessera's own endpoints (src/tokens/dpop-proof.ts), for this request and this token (`ath`), signed
// with the key the token is bound to (`cnf.jkt`), its `jti` used once.
import type { JWTPayload } from 'jose';
import { DPOP_MAX_AGE, DpopProofError, singleProof, verifyDpopProof } from '../tokens/dpop-proof.ts';

/** The request a DPoP-bound token came with (RFC 9449 §7.1): its DPoP header, method and full URL. */
export interface DpopRequest {
  /** The DPoP header as received (Node gives a repeated one as an array). */
  proof: string | string[] | undefined;
  method: string;
  /** The URL the client called (scheme, host, path; the query is ignored). */
  url: string;
}

/** Records `id` as used until `expiresAt` (epoch seconds): true the first time, false after. */
export type DpopReplay = (id: string, expiresAt: number) => boolean | Promise<boolean>;

/** Why a token and its presentation are refused: invalid_token or invalid_dpop_proof, and a description. */
export type DpopRefusal = ['invalid_token' | 'invalid_dpop_proof', string];

const MEMORY_MAX = 100_000;

/** A DpopReplay in this process's memory: for an API on one instance. */
export function memoryReplay(): DpopReplay {
  const used = new Map<string, number>();
  return (id, expiresAt) => {
    const now = Date.now() / 1000;
    if ((used.get(id) ?? 0) > now) return false;
    if (used.size >= MEMORY_MAX) {
      for (const [key, until] of used) if (until <= now) used.delete(key);
      // Still full of live entries: the oldest make room.
      for (const key of used.keys()) {
        if (used.size < MEMORY_MAX) break;
        used.delete(key);
      }
    }
    used.set(id, expiresAt);
    return true;
  };
}

/**
 * Checks how a verified token was presented: `request` for the DPoP scheme, undefined for Bearer.
 * Undefined when it holds, else the refusal.
 */
export async function dpopRefusal(
  token: string,
  payload: JWTPayload,
  request: DpopRequest | undefined,
  replay: DpopReplay,
): Promise<DpopRefusal | undefined> {
  const bound = (payload.cnf as { jkt?: unknown } | undefined)?.jkt;
  if (request === undefined) {
    return bound === undefined ? undefined : ['invalid_token', 'the access token is bound to a DPoP key: send a proof'];
  }
  if (typeof bound !== 'string') return ['invalid_token', 'the access token is not bound to a DPoP key'];
  if (request.proof === undefined) return ['invalid_dpop_proof', 'a DPoP proof is required with the DPoP scheme'];
  try {
    const now = Math.floor(Date.now() / 1000);
    const { method, url } = request;
    const proof = await verifyDpopProof(singleProof(request.proof), { method, url, now, accessToken: token });
    if (proof.jkt !== bound) return ['invalid_dpop_proof', 'the DPoP proof is not signed with the access token key'];
    if (!(await replay(`${proof.jkt}.${proof.jti}`, proof.iat + DPOP_MAX_AGE))) {
      return ['invalid_dpop_proof', 'the DPoP proof has already been used'];
    }
  } catch (err) {
    if (err instanceof DpopProofError) return ['invalid_dpop_proof', err.message];
    throw err;
  }
  return undefined;
}
