// The Store on SQLite: reads on the event loop's connection (prepared once, ./reader.ts, or through
// Kysely), writes through the writer (./writer.ts), on a worker thread for the server (./writer-thread.ts).
// In WAL mode the reads never wait for the writer, and every write resolves after its commit.
import { Kysely, type NoMigrations } from 'kysely';
import type { DatabaseSync } from 'node:sqlite';
import type { Grant, Rotation, RotationOutcome, TokenFamily } from '../grant.ts';
import { GRANT_COLUMNS, GRANT_FIELDS } from '../grant-rows.ts';
import { KyselyStore } from '../kysely-store.ts';
import type { DatabaseStats } from '../store.ts';
import type { Database } from '../tables.ts';
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
    grant.refreshGeneration === r.generation &&
    grant.clientId === r.clientId &&
    grant.revokedAt === null &&
    grant.refreshExpiresAt > r.now &&
    grant.createdAt + r.absoluteTtl > r.now &&
    user !== undefined &&
    !user.disabled &&
    (r.scope === null || r.scope.split(' ').every((s) => s === '' || granted.includes(s))) &&
    (r.resource === null || grant.resource === null || grant.resource === r.resource) &&
    (grant.dpopJkt == null || grant.dpopJkt === r.jkt)
  );
}

export class SqliteStore extends KyselyStore {
  readonly #writer: Writer;

  /** `sqlite` is the event loop's connection; it only reads. */
  constructor(sqlite: DatabaseSync, writer: Writer) {
    const reader = new SqliteReader(sqlite);
    super({
      db: new Kysely<Database>({ dialect: sqliteDialect(sqlite) }),
      placeholder: (n) => `?${n}`,
      writes: (statements) => writer.execute(statements.map(({ sql, parameters }) => ({ sql, parameters }))),
      // The reads written out by hand, as statements prepared once on this connection.
      reads: async (sql, parameters) => reader.rows(sql, parameters),
    });
    this.#writer = writer;
  }

  async redeemAuthorizationCode({ grant }: { grant: Grant }): Promise<boolean> {
    const [inserted] = await this.#writer.execute([
      { sql: WRITES.insertGrant, parameters: GRANT_COLUMNS.map((c) => grant[GRANT_FIELDS[c]] ?? null) },
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
    const expiresAt = Math.min(r.now + r.ttl, family.grant.createdAt + r.absoluteTtl);
    const parameters = [r.grantId, r.generation, r.now, expiresAt];
    const committing = this.#writer.execute([{ sql: WRITES.advanceFamily, parameters }]);
    const next = {
      ...family.grant,
      refreshGeneration: r.generation + 1,
      refreshIssuedAt: r.now,
      refreshExpiresAt: expiresAt,
    };
    const value = whileCommitting({ grant: next, user: family.user });
    value.catch(() => {});
    const [advanced] = await committing;
    // Lost to a concurrent refresh or revocation: the family as it now stands tells the caller why.
    if (advanced!.numAffectedRows !== 1n) return { rotated: false, family: await this.getTokenFamily(r.grantId) };
    return { rotated: true, family: { grant: next, user: family.user }, value: await value };
  }

  /** A SQLite file has no timeline: only the activity mark tells it went back (../restore-watch.ts). */
  async databaseTimeline(): Promise<null> {
    return null;
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
