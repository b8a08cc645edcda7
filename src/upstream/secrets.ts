// Upstream providers' client secrets, kept in the database encrypted under TESSERA_SECRET (../tokens/
// at-rest.ts, as signing keys and webhook secrets are, listed in ../store/encrypted.ts so that
// `tessera secret reencrypt` moves them to a new secret): Tessera needs them back to authenticate at
// the provider's token endpoint, so they cannot be hashed.
import { encryptAtRest, openAtRest } from '../tokens/at-rest.ts';
import type { Secrets } from '../tokens/secrets.ts';

export function sealClientSecret(clientSecret: string, secrets: Secrets): string {
  return encryptAtRest(secrets, 'upstreamClientSecret', clientSecret);
}

export function openClientSecret(sealed: string, secrets: Secrets): string {
  return openAtRest(secrets, 'upstreamClientSecret', sealed, "an upstream provider's client secret");
}
