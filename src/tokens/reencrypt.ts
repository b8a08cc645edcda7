// `tessera secret reencrypt`: every value stored encrypted (src/store/encrypted.ts lists where) moved
// to the newest secret of the keyring, so that the previous secrets can leave it (docs/rotation.md).
// Everything is read and decrypted first; a value no secret of the keyring opens stops the command
// before anything is written; the new values are written in one write, each only if unchanged since.
import type { EncryptedValueStore } from '../store/encrypted.ts';
import { decryptAtRest, encryptAtRest } from './at-rest.ts';
import type { Secrets } from './secrets.ts';

export interface ReencryptReport {
  /** Per column (`table.column`): values moved to the newest secret, and those already under it. */
  columns: Record<string, { reencrypted: number; current: number }>;
  /** Values changed by a running instance between the read and the write: run it again. */
  changedMeanwhile: number;
}

export class UndecryptableValues extends Error {
  override name = 'UndecryptableValues';
}

export async function reencryptSecrets(
  store: EncryptedValueStore,
  secrets: Secrets,
  options: { dryRun?: boolean } = {},
): Promise<ReencryptReport> {
  const values = await store.listEncryptedValues();
  const columns: ReencryptReport['columns'] = {};
  const changes = [];
  const unopened: string[] = [];
  for (const value of values) {
    const name = `${value.column.table}.${value.column.column}`;
    const counts = (columns[name] ??= { reencrypted: 0, current: 0 });
    const opened = decryptAtRest(secrets, value.column.purpose, value.value);
    if (opened === undefined) unopened.push(`${name} of ${value.key}`);
    else if (opened.current) counts.current++;
    else {
      counts.reencrypted++;
      changes.push({ ...value, replacement: encryptAtRest(secrets, value.column.purpose, opened.plaintext) });
    }
  }
  if (unopened.length > 0)
    throw new UndecryptableValues(
      `${unopened.length} value(s) open under neither TESSERA_SECRET nor TESSERA_SECRET_PREVIOUS, so nothing ` +
        `was changed: ${unopened.slice(0, 10).join(', ')}${unopened.length > 10 ? ', …' : ''}. Add the secret ` +
        'they were encrypted under to TESSERA_SECRET_PREVIOUS.',
    );
  const replaced = options.dryRun ? changes.length : await store.replaceEncryptedValues(changes);
  return { columns, changedMeanwhile: changes.length - replaced };
}
