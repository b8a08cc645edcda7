// DPoP (RFC 9449) at Tessera's own endpoints, the token endpoint and userinfo: a proof is checked by
// src/tokens/dpop-proof.ts, its `jti` used once across every instance (the store, as client
// assertions' are), and with TESSERA_DPOP_NONCE the server's nonce required (§8). Nonces are
// stateless: an HMAC of the time window under TESSERA_SECRET, so that any instance makes and accepts
// them. Only a request with a DPoP header comes here.
import type { KeyObject } from 'node:crypto';
import { createHmac } from 'node:crypto';
import { DpopBoundToken, InvalidDpopProof, InvalidToken, UseDpopNonce } from '../errors/index.ts';
import type { OneTimeStore } from '../store/one-time.ts';
import { DPOP_MAX_AGE, type DpopProof, DpopProofError, singleProof, verifyDpopProof } from '../tokens/dpop-proof.ts';
import { hashToken } from '../tokens/opaque.ts';
import { macMatches, purposeKeys } from '../tokens/sealed.ts';
import type { Secrets } from '../tokens/secrets.ts';

/** Seconds of a nonce's window: a nonce is accepted in its window and the next, 5 to 10 minutes. */
const NONCE_WINDOW = 300;

export interface DpopOptions {
  issuer: string;
  store: OneTimeStore;
  secrets: Secrets;
  /** TESSERA_DPOP_NONCE: every proof must carry a nonce of this server's. */
  requireNonce: boolean;
}

/** The request a proof came with: its method, the path on this server, and at userinfo the access token. */
export interface DpopRequest {
  method: string;
  path: string;
  now: number;
  accessToken?: string;
}

export class DpopProofs {
  readonly #options: DpopOptions;
  readonly #keys: KeyObject[];

  constructor(options: DpopOptions) {
    this.#options = options;
    this.#keys = purposeKeys(options.secrets, 'tessera dpop nonce');
  }

  /** The nonce a DPoP answer carries in its DPoP-Nonce header (§8.2), when nonces are required. */
  nonce(now: number): string | undefined {
    return this.#options.requireNonce ? this.#mac(this.#keys[0]!, Math.floor(now / NONCE_WINDOW)) : undefined;
  }

  /**
   * The proof of the DPoP header (§4.3), its `jti` used up: the thumbprint of its key. Throws
   * InvalidDpopProof, or UseDpopNonce when the nonce is missing or stale.
   */
  async check(header: string | string[], request: DpopRequest): Promise<string> {
    const { method, path, now, accessToken } = request;
    let proof: DpopProof;
    try {
      const url = `${this.#options.issuer}${path}`;
      proof = await verifyDpopProof(singleProof(header), { method, url, now, accessToken });
    } catch (err) {
      if (err instanceof DpopProofError) throw new InvalidDpopProof(err.message);
      throw err;
    }
    if (this.#options.requireNonce && !this.#nonceMatches(proof.nonce, now)) {
      const description = proof.nonce === undefined ? 'a DPoP nonce is required' : 'the DPoP nonce has expired';
      throw new UseDpopNonce(description, this.nonce(now)!);
    }
    // §11.1: one use per key, kept until its iat is too old for the proof to be accepted at all.
    const id = hashToken(`dpop\n${proof.jkt}\n${proof.jti}`);
    if (!(await this.#options.store.useOnce(id, proof.iat + DPOP_MAX_AGE))) {
      throw new InvalidDpopProof('the DPoP proof has already been used', `jti ${JSON.stringify(proof.jti)}`);
    }
    return proof.jkt;
  }

  #nonceMatches(nonce: string | undefined, now: number): boolean {
    if (nonce === undefined) return false;
    const window = Math.floor(now / NONCE_WINDOW);
    return macMatches(this.#keys, String(window), nonce) || macMatches(this.#keys, String(window - 1), nonce);
  }

  #mac(key: KeyObject, window: number): string {
    return createHmac('sha256', key).update(String(window)).digest('base64url');
  }
}

/**
 * RFC 9449 §7.1: a DPoP-bound token (`cnf.jkt`) only with a proof of its key, and a proof only with a
 * token bound to it. `presented` is the proof's thumbprint, undefined for a Bearer presentation.
 */
export function checkTokenBinding(cnf: { jkt?: unknown } | undefined, presented: string | undefined): void {
  const bound = cnf?.jkt;
  if (presented === undefined) {
    if (bound !== undefined) throw new DpopBoundToken('the access token is bound to a DPoP key: send it with a proof');
    return;
  }
  if (bound === undefined) throw new InvalidToken('the access token is not bound to a DPoP key');
  if (bound !== presented) throw new InvalidDpopProof('the DPoP proof is not signed with the access token key');
}
