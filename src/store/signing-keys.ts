// Signing keys (src/tokens/keystore.ts, key-timeline.ts): what the store answers about them, the key
// (camelCase) and its row (./tables.ts) both ways, and their Kysely code.
import type { OnConflictBuilder } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import type { AggregateClass } from './aggregate.ts';
import { columns, renamed } from './columns.ts';
import { insertEventsIf } from './outbox.ts';
import type { Database, SigningKeyRow } from './tables.ts';

export interface StoredSigningKey {
  kid: string;
  alg: string;
  /** The public JWK, as JSON. */
  publicJwk: string;
  /** The private JWK, encrypted with AES-256-GCM under a key derived from TESSERA_SECRET. */
  privateJwkEnc: string;
  createdAt: number;
  /** From then on it signs (until a successor activates); published from its creation. */
  activatesAt: number;
  /** The kid of the key it replaces, or `initial:<alg>`: unique, so one rotation inserts one key. */
  successorOf: string;
}

export interface SigningKeyStore {
  listSigningKeys(): Promise<StoredSigningKey[]>;
  /**
   * Inserts the key unless another key succeeds the same one already (a concurrent rotation won):
   * whether it was inserted. The event is written only with the key.
   */
  insertSigningKey(key: StoredSigningKey, event?: SecurityEvent): Promise<boolean>;
  /** Moves a key's activation (an emergency rotation activates a pending key at once). */
  activateSigningKey(kid: string, at: number, event?: SecurityEvent): Promise<boolean>;
  deleteSigningKeys(kids: string[]): Promise<number>;
}

const keyRows = renamed(
  columns<SigningKeyRow>()('kid alg public_jwk private_jwk_enc created_at activates_at successor_of'),
);
const toSigningKey: (row: SigningKeyRow) => StoredSigningKey = keyRows.to;
const fromSigningKey: (key: StoredSigningKey) => SigningKeyRow = keyRows.from;

/** Signing keys: the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withSigningKeys<Base extends AggregateClass>(Base: Base) {
  abstract class SigningKeys extends Base implements SigningKeyStore {
    async listSigningKeys(): Promise<StoredSigningKey[]> {
      const rows = await this.db.selectFrom('signing_keys').selectAll().orderBy('created_at').orderBy('kid').execute();
      return rows.map(toSigningKey);
    }

    async insertSigningKey(key: StoredSigningKey, event?: SecurityEvent): Promise<boolean> {
      const once = (c: OnConflictBuilder<Database, 'signing_keys'>) => c.column('successor_of').doNothing();
      const inserted = this.db.insertInto('signing_keys').values(fromSigningKey(key)).onConflict(once);
      return (await this.write(inserted, ...insertEventsIf(this.db, event, { signingKey: key.kid }))) === 1;
    }

    async activateSigningKey(kid: string, at: number, event?: SecurityEvent): Promise<boolean> {
      const moved = this.db.updateTable('signing_keys').set({ activates_at: at }).where('kid', '=', kid);
      return this.changeOne(event, moved);
    }

    async deleteSigningKeys(kids: string[]): Promise<number> {
      if (kids.length === 0) return 0;
      return this.write(this.db.deleteFrom('signing_keys').where('kid', 'in', kids));
    }
  }
  return SigningKeys;
}
