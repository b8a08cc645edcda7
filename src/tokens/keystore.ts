// Signing keys: generated on first start, kept in the database with the private half encrypted
// (AES-256-GCM under a key derived from TESSERA_SECRET, ./at-rest.ts), published as a JWKS (RFC 7517),
// and rotated on the schedule of ./key-timeline.ts (./key-rotation.ts starts rotations).
import { createPrivateKey, type KeyObject } from 'node:crypto';
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  type CryptoKey,
  type JWK,
} from 'jose';
import type { SigningKeyStore, StoredSigningKey } from '../store/signing-keys.ts';
import { DEFAULT_TIMELINE, type KeyDates, type KeyTimeline, keyStates, nextChange } from './key-timeline.ts';
import { encryptAtRest, openAtRest } from './at-rest.ts';
import type { Secrets } from './secrets.ts';

export type SigningAlg = 'RS256' | 'ES256';
export const SIGNING_ALGS: readonly SigningAlg[] = ['RS256', 'ES256'];

export interface SigningKey {
  kid: string;
  alg: SigningAlg;
  /** A node:crypto key: signing with it is synchronous and cheaper than a WebCrypto job. */
  privateKey: KeyObject;
  publicKey: CryptoKey;
}

/** The private JWK encrypted under the newest secret. */
export function sealPrivateJwk(jwk: JWK, secrets: Secrets): string {
  return encryptAtRest(secrets, 'signingKey', JSON.stringify(jwk));
}

/** The private JWK, decrypted under whichever secret of the keyring encrypted it. */
export function openPrivateJwk(sealed: string, secrets: Secrets): JWK {
  return JSON.parse(openAtRest(secrets, 'signingKey', sealed, "a signing key's private key")) as JWK;
}

/** A new key of `alg` that replaces `successorOf` and signs from `activatesAt`. */
export async function generateKey(
  alg: SigningAlg,
  secret: Secrets,
  now: number,
  activatesAt: number,
  successorOf: string,
): Promise<StoredSigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  return {
    kid,
    alg,
    publicJwk: JSON.stringify({ ...publicJwk, kid, alg, use: 'sig' }),
    privateJwkEnc: sealPrivateJwk(await exportJWK(privateKey), secret),
    createdAt: now,
    activatesAt,
    successorOf,
  };
}

export interface KeyStoreOptions {
  timeline?: KeyTimeline;
  /** Epoch seconds; tests move it. */
  now?: () => number;
}

/** An instance seeing a kid it does not know reloads the keys, at most this often (seconds). */
const UNKNOWN_KID_RELOAD = 5;

export class KeyStore {
  readonly store: SigningKeyStore;
  /** TESSERA_SECRET, and the previous secrets that still decrypt keys made before a rotation. */
  readonly secret: Secrets;
  readonly timeline: KeyTimeline;
  readonly now: () => number;
  #rows: StoredSigningKey[] = [];
  #imported = new Map<string, { publicKey: CryptoKey; privateKey?: KeyObject }>();
  #signing = new Map<SigningAlg, SigningKey>();
  #verifying = new Map<string, CryptoKey>();
  #jwks: { keys: JWK[] } = { keys: [] };
  /** When the next key activates or leaves: the state is computed again then. */
  #changeAt = Infinity;
  #lastReload = 0;

  private constructor(store: SigningKeyStore, secret: Secrets, options: KeyStoreOptions) {
    this.store = store;
    this.secret = secret;
    this.timeline = options.timeline ?? DEFAULT_TIMELINE;
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
  }

  /** Loads the keys, generating an active key for each supported algorithm that has none (reload). */
  static async open(store: SigningKeyStore, secret: Secrets, options: KeyStoreOptions = {}): Promise<KeyStore> {
    const keyStore = new KeyStore(store, secret, options);
    await keyStore.reload();
    return keyStore;
  }

  /**
   * Re-reads the keys from the database (another instance may have rotated them). An algorithm left
   * without a key (a restore fence removes them all, src/store/restores.ts) gets a new one that signs
   * at once; instances that find none at the same moment insert one between them.
   */
  async reload(): Promise<void> {
    const now = this.now();
    this.#lastReload = now;
    let rows = await this.store.listSigningKeys();
    const missing = SIGNING_ALGS.filter((alg) => !rows.some((row) => row.alg === alg));
    if (missing.length > 0) {
      for (const alg of missing)
        await this.store.insertSigningKey(await generateKey(alg, this.secret, now, now, `initial:${alg}`));
      rows = await this.store.listSigningKeys();
    }
    const imported = new Map<string, { publicKey: CryptoKey; privateKey?: KeyObject }>();
    for (const row of rows) {
      imported.set(
        row.kid,
        this.#imported.get(row.kid) ?? {
          publicKey: (await importJWK(JSON.parse(row.publicJwk) as JWK, row.alg)) as CryptoKey,
        },
      );
    }
    this.#imported = imported;
    this.#rows = rows;
    this.#compute(this.now());
  }

  /** The keys' states now: which signs, which are published. */
  #compute(now: number): void {
    const states = keyStates(this.#rows, now, this.timeline);
    const rows = new Map(this.#rows.map((row) => [row.kid, row]));
    const signing = new Map<SigningAlg, SigningKey>();
    const verifying = new Map<string, CryptoKey>();
    const keys: JWK[] = [];
    for (const state of states) {
      if (state.state === 'expired') continue;
      const row = rows.get(state.kid)!;
      const key = this.#imported.get(state.kid)!;
      verifying.set(state.kid, key.publicKey);
      keys.push(JSON.parse(row.publicJwk) as JWK);
      // A key that does not sign keeps no private half in memory (a retired one never signs again).
      if (state.state !== 'active') delete key.privateKey;
      if (state.state === 'active') {
        key.privateKey ??= createPrivateKey({
          key: openPrivateJwk(row.privateJwkEnc, this.secret) as never,
          format: 'jwk',
        });
        const alg = row.alg as SigningAlg;
        signing.set(alg, { kid: row.kid, alg, privateKey: key.privateKey, publicKey: key.publicKey });
      }
    }
    this.#signing = signing;
    this.#verifying = verifying;
    this.#jwks = { keys };
    this.#changeAt = nextChange(states, now);
  }

  /** The active key of `alg`. A comparison of the clock per call: a key activates on time between reloads. */
  signingKey(alg: SigningAlg): SigningKey {
    const now = this.now();
    if (now >= this.#changeAt) this.#compute(now);
    const key = this.#signing.get(alg);
    if (!key) throw new Error(`no active ${alg} signing key`);
    return key;
  }

  /** A published key; an unknown kid makes this instance reload the keys (at most every 5 s). */
  verificationKey(kid: string): CryptoKey | undefined {
    const key = this.#verifying.get(kid);
    if (!key && this.now() - this.#lastReload >= UNKNOWN_KID_RELOAD) this.reload().catch(() => {});
    return key;
  }

  /**
   * The published key that signed a JWT of ours, found by its header's `kid`, with that kid: 'malformed'
   * when the header cannot be read, undefined when it names no key of ours.
   */
  signerOf(jwt: string): { kid: string; key: CryptoKey } | 'malformed' | undefined {
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(jwt).kid;
    } catch {
      return 'malformed';
    }
    const key = kid ? this.verificationKey(kid) : undefined;
    return kid && key ? { kid, key } : undefined;
  }

  /** Public keys only: the active, the next and the retired keys still published. */
  jwks(): { keys: JWK[] } {
    const now = this.now();
    if (now >= this.#changeAt) this.#compute(now);
    return this.#jwks;
  }

  /** Every key's state and dates, as of now. */
  states(): KeyDates[] {
    return keyStates(this.#rows, this.now(), this.timeline);
  }
}
