// Signing keys: generated on first start, kept in the database with the private half encrypted
// (AES-256-GCM under a key derived from TESSERA_SECRET), published as a JWKS (RFC 7517).
import { createPrivateKey, hkdfSync, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { SigningKeyStore } from '../store/store.ts';
import type { SigningKeyRow } from '../store/types.ts';
import { gcmDecrypt, gcmEncrypt } from './sealed.ts';

export type SigningAlg = 'RS256' | 'ES256';
export const SIGNING_ALGS: readonly SigningAlg[] = ['RS256', 'ES256'];

export interface SigningKey {
  kid: string;
  alg: SigningAlg;
  /** A node:crypto key: signing with it is synchronous and cheaper than a WebCrypto job. */
  privateKey: KeyObject;
  publicKey: CryptoKey;
}

function encryptionKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'tessera', 'tessera signing key encryption v1', 32));
}

export function sealPrivateJwk(jwk: JWK, secret: string): string {
  const { iv, ciphertext, tag } = gcmEncrypt(encryptionKey(secret), JSON.stringify(jwk));
  return [iv, ciphertext, tag].map((b) => b.toString('base64url')).join('.');
}

export function openPrivateJwk(sealed: string, secret: string): JWK {
  const [iv, ciphertext, tag] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
  if (!iv || !ciphertext || !tag) throw new Error('signing key: malformed encrypted private key');
  const plain = gcmDecrypt(encryptionKey(secret), iv, ciphertext, tag);
  if (plain === undefined)
    throw new Error('signing key: cannot decrypt the private key; is TESSERA_SECRET the one it was created with?');
  return JSON.parse(plain) as JWK;
}

async function generateKey(alg: SigningAlg, secret: string, now: number): Promise<SigningKeyRow> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const private_jwk_enc = sealPrivateJwk(await exportJWK(privateKey), secret);
  const public_jwk = JSON.stringify({ ...publicJwk, kid, alg, use: 'sig' });
  return { kid, alg, public_jwk, private_jwk_enc, created_at: now, status: 'active' };
}

export class KeyStore {
  readonly #store: SigningKeyStore;
  readonly #secret: string;
  #signing = new Map<SigningAlg, SigningKey>();
  #verifying = new Map<string, CryptoKey>();
  #jwks: { keys: JWK[] } = { keys: [] };

  private constructor(store: SigningKeyStore, secret: string) {
    this.#store = store;
    this.#secret = secret;
  }

  /** Loads the keys, generating an active key for each supported algorithm that has none. */
  static async open(store: SigningKeyStore, secret: string, now = Math.floor(Date.now() / 1000)): Promise<KeyStore> {
    const keyStore = new KeyStore(store, secret);
    const rows = await store.listSigningKeys();
    for (const alg of SIGNING_ALGS) {
      if (!rows.some((row) => row.alg === alg && row.status === 'active')) {
        await store.insertSigningKey(await generateKey(alg, secret, now));
      }
    }
    await keyStore.reload();
    return keyStore;
  }

  /** Re-reads the keys from the database (another instance may have rotated them). */
  async reload(): Promise<void> {
    const rows = await this.#store.listSigningKeys();
    const signing = new Map<SigningAlg, SigningKey>();
    const verifying = new Map<string, CryptoKey>();
    const keys: JWK[] = [];
    // Newest first, so the newest active key of each algorithm signs.
    for (const row of [...rows].sort((a, b) => b.created_at - a.created_at)) {
      const alg = row.alg as SigningAlg;
      const publicJwk = JSON.parse(row.public_jwk) as JWK;
      const publicKey = (await importJWK(publicJwk, alg)) as CryptoKey;
      verifying.set(row.kid, publicKey);
      keys.push(publicJwk);
      if (row.status === 'active' && !signing.has(alg)) {
        const privateKey = createPrivateKey({
          key: openPrivateJwk(row.private_jwk_enc, this.#secret) as never,
          format: 'jwk',
        });
        signing.set(alg, { kid: row.kid, alg, privateKey, publicKey });
      }
    }
    this.#signing = signing;
    this.#verifying = verifying;
    this.#jwks = { keys };
  }

  signingKey(alg: SigningAlg): SigningKey {
    const key = this.#signing.get(alg);
    if (!key) throw new Error(`no active ${alg} signing key`);
    return key;
  }

  verificationKey(kid: string): CryptoKey | undefined {
    return this.#verifying.get(kid);
  }

  /** Public keys only. */
  jwks(): { keys: JWK[] } {
    return this.#jwks;
  }

  /** Generates a new active key for `alg`; older keys of it are retired but still published. */
  async rotate(alg: SigningAlg, now = Math.floor(Date.now() / 1000)): Promise<{ kid: string }> {
    const row = await generateKey(alg, this.#secret, now);
    await this.#store.insertSigningKey(row);
    await this.#store.retireSigningKeys(alg, row.kid);
    await this.reload();
    return { kid: row.kid };
  }
}

export async function listKeys(
  store: SigningKeyStore,
): Promise<Array<{ kid: string; alg: string; status: string; createdAt: number }>> {
  const rows = await store.listSigningKeys();
  return rows.map((row) => ({ kid: row.kid, alg: row.alg, status: row.status, createdAt: row.created_at }));
}
