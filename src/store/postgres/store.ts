// The Store on PostgreSQL: Kysely and named statements for everything (./connection.ts), and the two
// hot writes batched, concurrent calls sharing one statement and its commit (./batches.ts).
import { Kysely, sql } from 'kysely';
import type pg from 'pg';
import { type Connection, kyselyReads } from '../aggregate.ts';
import { DatabaseUnavailable, FaultCounter } from '../faults.ts';
import type { Grant, Rotation, RotationOutcome, TokenFamily } from '../grant.ts';
import { type FamilyRow, GRANT_COLUMNS, GRANT_FIELDS, toTokenFamily } from '../grant-rows.ts';
import { KyselyStore } from '../kysely-store.ts';
import type { DatabaseStats } from '../store.ts';
import type { Database } from '../tables.ts';
import { StatementBatches } from './batches.ts';
import { postgresDialect, postgresPool } from './connection.ts';
import { REDEEM_AUTHORIZATION_CODES, ROTATE_TOKEN_FAMILIES } from './statements.ts';

export class PostgresStore extends KyselyStore {
  readonly #redemptions: StatementBatches<Grant, true>;
  readonly #rotations: StatementBatches<Rotation, TokenFamily>;
  readonly #pool: pg.Pool;
  readonly #faults: FaultCounter;

  /** `namedStatements` (default true) names each statement, so a connection plans it once; `poolSize` (10). */
  constructor(databaseUrl: string, { namedStatements = true, poolSize = 10 } = {}) {
    const faults = new FaultCounter();
    const pool = postgresPool(databaseUrl, faults, poolSize, namedStatements);
    const db = new Kysely<Database>({ dialect: postgresDialect(pool, faults, namedStatements) });
    const connection: Connection = {
      db,
      placeholder: (n) => `$${n}`,
      writes: (statements) =>
        statements.length === 1
          ? Promise.all([db.executeQuery(statements[0]!)])
          : db.transaction().execute(async (trx) => {
              const results = [];
              for (const statement of statements) results.push(await trx.executeQuery(statement));
              return results;
            }),
      reads: kyselyReads(db),
      skipLocked: true,
    };
    super(connection);
    const { reads } = connection;
    this.#pool = pool;
    this.#faults = faults;
    this.#redemptions = new StatementBatches({
      key: (grant) => grant.id,
      statement: async (grants) => {
        const redeemed = (await reads(
          REDEEM_AUTHORIZATION_CODES,
          GRANT_COLUMNS.map((c) => grants.map((g) => g[GRANT_FIELDS[c]] ?? null)),
        )) as Array<{ id: string }>;
        return new Map(redeemed.map((row) => [row.id, true as const]));
      },
    });
    this.#rotations = new StatementBatches({
      key: (r) => r.grantId,
      statement: async (rs) => {
        const rotated = (await reads(ROTATE_TOKEN_FAMILIES, [
          rs.map((r) => r.now),
          rs.map((r) => r.grantId),
          rs.map((r) => r.generation),
          rs.map((r) => r.clientId),
          rs.map((r) => r.scope),
          rs.map((r) => r.absoluteTtl),
          rs.map((r) => r.ttl),
          rs.map((r) => r.resource),
          rs.map((r) => r.jkt ?? null),
        ])) as FamilyRow[];
        return new Map(rotated.map((row) => [row.g_id, toTokenFamily(row)!]));
      },
    });
  }

  /**
   * The timeline the server writes WAL on (a point-in-time recovery or a promotion starts a new one),
   * from the name of the current WAL file, which every role may read; else from pg_control_checkpoint()
   * (the last checkpoint's, which follows a promotion within a checkpoint). Throws when neither may be
   * called (an EXECUTE revoked from PUBLIC, a service that hides them): ../restore-watch.ts.
   */
  async databaseTimeline(): Promise<number> {
    try {
      const { rows } = await sql<{ wal: string }>`select pg_walfile_name(pg_current_wal_lsn()) as wal`.execute(this.db);
      return Number.parseInt(rows[0]!.wal.slice(0, 8), 16);
    } catch (err) {
      if (err instanceof DatabaseUnavailable) throw err;
      const { rows } = await sql<{
        timeline: number;
      }>`select timeline_id as timeline from pg_control_checkpoint()`.execute(this.db);
      return Number(rows[0]!.timeline);
    }
  }

  stats(): DatabaseStats {
    const pool = this.#pool;
    return {
      open: pool.totalCount,
      inUse: pool.totalCount - pool.idleCount,
      waiting: pool.waitingCount,
      faults: this.#faults.count,
    };
  }

  async redeemAuthorizationCode(input: { grant: Grant }): Promise<boolean> {
    return (await this.#redemptions.run(input.grant)) === true;
  }

  /** One statement when the refresh is valid; when it wrote nothing, a read tells the caller why. */
  async rotateTokenFamily<T>(
    r: Rotation,
    whileCommitting: (family: TokenFamily) => Promise<T>,
  ): Promise<RotationOutcome<T>> {
    const family = await this.#rotations.run(r);
    if (!family) return { rotated: false, family: await this.getTokenFamily(r.grantId) };
    return { rotated: true, family, value: await whileCommitting(family) };
  }
}
