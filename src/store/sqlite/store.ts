// The Store on SQLite: reads on the event loop's connection (prepared once, ./reader.ts, or through
// Kysely), writes through the writer (./writer.ts), on a worker thread for the server (./writer-thread.ts).
// In WAL mode the reads never wait for the writer, and every write resolves after its commit.
import { Kysely, type NoMigrations } from 'kysely';
import type { DatabaseSync } from 'node:sqlite';
import { Repository } from '../repository.ts';
import { GRANT_COLUMNS } from '../rows.ts';
import type { DatabaseStats, Rotation, RotationOutcome, Store, TokenFamily } from '../store.ts';
import type { Database, GrantRow } from '../types.ts';
import { sqliteDialect } from './connection.ts';
import { SqliteReader } from './reader.ts';
import { WRITES } from './statements.ts';
import type { Writer } from './writer-thread.ts';

/** Whether a refresh may move the family on: the conditions of Store.rotateTokenFamily. */
function mayRotate(r: Rotation, family: TokenFamily | undefined): family is TokenFamily {
  if (!family) return false;
  const { grant, user } = family;
  const granted = grant.scope.split(' ');
  return (
    grant.refresh_generation === r.generation &&
    grant.client_id === r.clientId &&
    grant.revoked_at === null &&
    grant.refresh_expires_at > r.now &&
    grant.created_at + r.absoluteTtl > r.now &&
    user !== undefined &&
    !user.disabled &&
    (r.scope === null || r.scope.split(' ').every((s) => s === '' || granted.includes(s))) &&
    (r.resource === null || grant.resource === null || grant.resource === r.resource)
  );
}

export class SqliteStore extends Repository implements Store {
  readonly #reader: SqliteReader;
  readonly #writer: Writer;

  /** `sqlite` is the event loop's connection; it only reads. */
  constructor(sqlite: DatabaseSync, writer: Writer) {
    const db = new Kysely<Database>({ dialect: sqliteDialect(sqlite) });
    super(
      db,
      (n) => `?${n}`,
      (statements) => writer.execute(statements.map(({ sql, parameters }) => ({ sql, parameters }))),
    );
    this.#reader = new SqliteReader(sqlite);
    this.#writer = writer;
  }

  /** The reads written out by hand, as statements prepared once on this connection. */
  protected override async rows<T>(sql: string, parameters: unknown[]) {
    return this.#reader.rows(sql, parameters) as T[];
  }

  async redeemAuthorizationCode({ grant }: { grant: GrantRow }): Promise<boolean> {
    const [inserted] = await this.#writer.execute([
      { sql: WRITES.insertGrant, parameters: GRANT_COLUMNS.map((c) => grant[c]) },
    ]);
    return inserted!.numAffectedRows === 1n;
  }

  /** The family is read here, and written only when the refresh holds: SQLite's reads cost little. */
  async rotateTokenFamily<T>(
    r: Rotation,
    whileCommitting: (family: TokenFamily) => Promise<T>,
  ): Promise<RotationOutcome<T>> {
    const family = await this.getTokenFamily(r.grantId);
    if (!mayRotate(r, family)) return { rotated: false, family };
    const expiresAt = Math.min(r.now + r.ttl, family.grant.created_at + r.absoluteTtl);
    const parameters = [r.grantId, r.generation, r.now, expiresAt];
    const committing = this.#writer.execute([{ sql: WRITES.advanceFamily, parameters }]);
    const next = {
      ...family.grant,
      refresh_generation: r.generation + 1,
      refresh_issued_at: r.now,
      refresh_expires_at: expiresAt,
    };
    const value = whileCommitting({ grant: next, user: family.user });
    value.catch(() => {});
    const [advanced] = await committing;
    // Lost to a concurrent refresh or revocation: the family as it now stands tells the caller why.
    if (advanced!.numAffectedRows !== 1n) return { rotated: false, family: await this.getTokenFamily(r.grantId) };
    return { rotated: true, family: { grant: next, user: family.user }, value: await value };
  }

  stats(): DatabaseStats {
    const { queued, faults } = this.#writer.stats();
    return { open: 2, inUse: queued > 0 ? 1 : 0, waiting: queued, faults };
  }

  override migrate(to?: string | NoMigrations) {
    return this.#writer.migrate(to);
  }

  override async close(): Promise<void> {
    await this.#writer.close();
    await super.close();
  }
}
