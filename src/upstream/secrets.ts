// Upstream providers' client secrets, kept in the database encrypted under TESSERA_SECRET (AES-256-GCM
// under a key derived for this purpose alone, as signing keys and webhook secrets are): Tessera
// needs them back to authenticate at the provider's token endpoint, so they cannot be hashed.
import { hkdfSync } from 'node:crypto';
import { gcmDecrypt, gcmEncrypt } from '../tokens/sealed.ts';

function encryptionKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'tessera', 'tessera upstream client secret v1', 32));
}

export function sealClientSecret(clientSecret: string, secret: string): string {
  const { iv, ciphertext, tag } = gcmEncrypt(encryptionKey(secret), clientSecret);
  return [iv, ciphertext, tag].map((b) => b.toString('base64url')).join('.');
}

export function openClientSecret(sealed: string, secret: string): string {
  const [iv, ciphertext, tag] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
  const plain = iv && ciphertext && tag ? gcmDecrypt(encryptionKey(secret), iv, ciphertext, tag) : undefined;
  if (plain === undefined)
    throw new Error('upstream client secret: cannot decrypt it; is TESSERA_SECRET the one it was made with?');
  return plain;
}
