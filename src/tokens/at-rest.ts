// Values stored encrypted under TESSERA_SECRET (the signing keys' private halves, webhook secrets,
// and whatever src/store/encrypted.ts lists): AES-256-GCM under a key derived from the secret for
// one purpose, with a random 96-bit IV, stored as base64url(IV).base64url(ciphertext).base64url(tag).
// The value does not say which secret encrypted it: GCM's tag tells, so decrypting tries the
// secrets newest first (./secrets.ts) and says whether the newest was the one.
import { hkdfSync } from 'node:crypto';
import { gcmDecrypt, gcmEncrypt } from './sealed.ts';
import { currentSecret, type Secrets, secretList } from './secrets.ts';

/**
 * What is stored encrypted, by name, with the purpose (HKDF info) its key is derived for. A new kind
 * of encrypted value adds its name here and its column to src/store/encrypted.ts, which `tessera
 * secret reencrypt` and `tessera import` walk.
 */
export const AT_REST = {
  signingKey: 'tessera signing key encryption v1',
  webhookSecret: 'tessera webhook secret v1',
  upstreamClientSecret: 'tessera upstream client secret v1',
  mailMessage: 'tessera mail message v1',
  totpSecret: 'tessera totp secret v1',
  clientSecret: 'tessera client secret v1',
} as const;

export type AtRestPurpose = keyof typeof AT_REST;

const keys = new Map<string, Buffer>();

function encryptionKey(secret: string, purpose: AtRestPurpose): Buffer {
  const id = `${purpose}\n${secret}`;
  let key = keys.get(id);
  if (!key) keys.set(id, (key = Buffer.from(hkdfSync('sha256', secret, 'tessera', AT_REST[purpose], 32))));
  return key;
}

/** `plaintext` encrypted under the newest secret. */
export function encryptAtRest(secrets: Secrets, purpose: AtRestPurpose, plaintext: string): string {
  const { iv, ciphertext, tag } = gcmEncrypt(encryptionKey(currentSecret(secrets), purpose), plaintext);
  return [iv, ciphertext, tag].map((b) => b.toString('base64url')).join('.');
}

/**
 * The plaintext, and whether the newest secret encrypted it (else `tessera secret reencrypt` moves
 * it); undefined when the value is malformed or no secret of the keyring opens it.
 */
export function decryptAtRest(
  secrets: Secrets,
  purpose: AtRestPurpose,
  value: string,
): { plaintext: string; current: boolean } | undefined {
  const parts = value.split('.');
  if (parts.length !== 3) return undefined;
  const [iv, ciphertext, tag] = parts.map((part) => Buffer.from(part, 'base64url')) as [Buffer, Buffer, Buffer];
  const list = secretList(secrets);
  for (let i = 0; i < list.length; i++) {
    const plaintext = gcmDecrypt(encryptionKey(list[i]!, purpose), iv, ciphertext, tag);
    if (plaintext !== undefined) return { plaintext, current: i === 0 };
  }
  return undefined;
}

/**
 * The plaintext of a value Tessera cannot work without (a signing key, a webhook's or an upstream's
 * secret, an authenticator's): an error naming `what` when no secret of the keyring opens it.
 */
export function openAtRest(secrets: Secrets, purpose: AtRestPurpose, value: string, what: string): string {
  const opened = decryptAtRest(secrets, purpose, value);
  if (opened === undefined) {
    const keyring = 'TESSERA_SECRET (or one of TESSERA_SECRET_PREVIOUS)';
    throw new Error(`${what}: cannot decrypt it; is ${keyring} the secret it was stored under?`);
  }
  return opened.plaintext;
}
