// TESSERA_SECRET as a keyring: the secret that seals, signs and encrypts from now on, followed by the
// ones it replaced (TESSERA_SECRET_PREVIOUS), which still open, verify and decrypt what they made.
// So a secret is rotated without losing anything: codes, interactions, refresh tokens and cookies
// made under the previous secret keep working until they expire, and `tessera secret reencrypt`
// moves what is stored encrypted to the new one (docs/rotation.md).
//
// Opening tries the newest secret first and a previous one only when that fails, so the hot paths
// (a code's redemption, a refresh) cost what they cost with one secret.

/** TESSERA_SECRET alone, or it and the previous secrets, newest first. */
export type Secrets = string | readonly string[];

/** The secrets, newest first; at least one. */
export function secretList(secrets: Secrets): readonly string[] {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  if (list.length === 0) throw new TypeError('no secret: TESSERA_SECRET is required');
  return list;
}

/** The secret that seals and encrypts: TESSERA_SECRET. */
export function currentSecret(secrets: Secrets): string {
  return secretList(secrets)[0]!;
}
