// Every column that holds a value encrypted under TESSERA_SECRET (src/tokens/at-rest.ts), with the
// name of the purpose it is encrypted for: what `tessera secret reencrypt` moves to a new secret and
// what `tessera import` checks it can decrypt. A table that stores an encrypted value adds one line.
import type { AtRestPurpose } from '../tokens/at-rest.ts';
import type { AggregateClass } from './aggregate.ts';
import type { Database } from './tables.ts';

export interface EncryptedColumn {
  table: keyof Database;
  /** The table's primary key (one column). */
  key: string;
  column: string;
  purpose: AtRestPurpose;
}

function encrypted<T extends keyof Database>(
  table: T,
  key: keyof Database[T] & string,
  column: keyof Database[T] & string,
  purpose: AtRestPurpose,
): EncryptedColumn {
  return { table, key, column, purpose };
}

export const ENCRYPTED_COLUMNS: readonly EncryptedColumn[] = [
  encrypted('signing_keys', 'kid', 'private_jwk_enc', 'signingKey'),
  encrypted('webhooks', 'id', 'secret_enc', 'webhookSecret'),
  encrypted('webhooks', 'id', 'previous_secret_enc', 'webhookSecret'),
  encrypted('upstream_providers', 'id', 'client_secret_enc', 'upstreamClientSecret'),
  // A mail's message, with its link, while it waits in the outbox (erased once sent).
  encrypted('mails', 'id', 'message_enc', 'mailMessage'),
  encrypted('totp_credentials', 'user_id', 'secret_enc', 'totpSecret'),
  // A client_secret_jwt client's secret, which checks its assertions' HMAC.
  encrypted('clients', 'client_id', 'secret_enc', 'clientSecret'),
];

/** One encrypted value: where it is and what it holds now. */
export interface EncryptedValue {
  column: EncryptedColumn;
  key: string;
  value: string;
}

export interface EncryptedValueStore {
  /** Every value of ENCRYPTED_COLUMNS that is not null. */
  listEncryptedValues(): Promise<EncryptedValue[]>;
  /**
   * Replaces each value with its new one, in one write, each only if it still holds the value read
   * (a running instance may have changed it since): how many were replaced.
   */
  replaceEncryptedValues(changes: Array<EncryptedValue & { replacement: string }>): Promise<number>;
}

// The tables and columns come from ENCRYPTED_COLUMNS, never from input: the queries name them
// through Kysely's dynamic references.
type Loose = import('kysely').Kysely<Record<string, Record<string, string | null>>>;

/** Values encrypted under TESSERA_SECRET: the Kysely code, on top of `Base` (./kysely-store.ts). */
export function withEncryptedValues<Base extends AggregateClass>(Base: Base) {
  abstract class EncryptedValues extends Base implements EncryptedValueStore {
    async listEncryptedValues(): Promise<EncryptedValue[]> {
      const db = this.db as unknown as Loose;
      const values: EncryptedValue[] = [];
      for (const column of ENCRYPTED_COLUMNS) {
        const rows = await db
          .selectFrom(column.table)
          .select([`${column.key} as key`, `${column.column} as value`])
          .where(column.column, 'is not', null)
          .orderBy(column.key)
          .execute();
        for (const row of rows) values.push({ column, key: String(row.key), value: String(row.value) });
      }
      return values;
    }

    async replaceEncryptedValues(changes: Array<EncryptedValue & { replacement: string }>): Promise<number> {
      if (changes.length === 0) return 0;
      const db = this.db as unknown as Loose;
      const updates = changes.map(({ column, key, value, replacement }) =>
        db
          .updateTable(column.table)
          .set({ [column.column]: replacement })
          .where(column.key, '=', key)
          .where(column.column, '=', value)
          .returning(column.key),
      );
      return (await this.writeRows(...updates)).length;
    }
  }
  return EncryptedValues;
}
