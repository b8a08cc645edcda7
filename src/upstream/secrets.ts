// Upstream providers' client secrets, kept in the database encrypted under TESSERA_SECRET (../tokens/
// at-rest.ts, as signing keys and webhook secrets are, listed in ../store/encrypted.ts so that
// `tessera secret reencrypt` moves them to a new secret): Tessera needs them back to authenticate at
// the provider's token endpoint, so they cannot be hashed.
import { decryptAtRest, encryptAtRest } from '../tokens/at-rest.ts';
import type { Secrets } from '../tokens/secrets.ts';

export function sealClientSecret(clientSecret: string, secrets: Secrets): string {
  return encryptAtRest(secrets, 'upstreamClientSecret', clientSecret);
}

export function openClientSecret(sealed: string, secrets: Secrets): string {
  const opened = decryptAtRest(secrets, 'upstreamClientSecret', sealed);
  if (opened === undefined)
    throw new Error('upstream client secret: cannot decrypt it; is TESSERA_SECRET the one it was made with?');
  return opened.plaintext;
}
