// The base of each aggregate's Kysely code (./clients.ts, ./users.ts, …), which SQLite and PostgreSQL
// share: statements are built with Kysely and run by the database's own writes and reads, on SQLite
// by the writer's group commit and the event loop's prepared reads, on PostgreSQL as one statement
// or in a transaction.
import { CompiledQuery, sql } from 'kysely';
import type { Compilable, FilterObject, Kysely, QueryResult, Selectable, SelectQueryBuilder } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import type { Placeholder } from './columns.ts';
import { insertEvents } from './outbox.ts';
import { type EndCondition, endSessions } from './session-ends.ts';
import type { Database } from './tables.ts';

/** Runs a write's statements, all or none; resolves once they are committed. */
export type Writes = (
  statements: CompiledQuery[],
) => Promise<Array<Pick<QueryResult<unknown>, 'numAffectedRows' | 'rows'>>>;

/** Runs a statement written out by hand: its rows. */
export type Reads = (text: string, parameters: unknown[]) => Promise<unknown[]>;

/** How a database runs what the aggregates build: what each database's store passes them. */
export interface Connection {
  db: Kysely<Database>;
  /** The parameter style of the statements written out by hand. */
  placeholder: Placeholder;
  writes: Writes;
  /** SQLite runs them prepared once on the event loop's connection; PostgreSQL through Kysely. */
  reads: Reads;
  /**
   * PostgreSQL: an outbox's claim locks the entries it takes and passes over those another instance's
   * claim is locking (FOR UPDATE SKIP LOCKED, ./outbox.ts); SQLite has one writer.
   */
  skipLocked?: boolean;
}

/** Reads written out by hand, run through Kysely (PostgreSQL names them, ./postgres/connection.ts). */
export function kyselyReads(db: Kysely<Database>): Reads {
  return async (text, parameters) => (await db.executeQuery(CompiledQuery.raw(text, parameters))).rows;
}

/**
 * A class an aggregate's code extends: Aggregate, or the aggregates' code below it, each `withX(Base)`
 * of its file (./clients.ts withClients, …) adding its own on top (./kysely-store.ts stacks them all).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- TypeScript's rule for a class that extends a parameter
export type AggregateClass = abstract new (...args: any[]) => Aggregate;

export abstract class Aggregate {
  readonly db: Kysely<Database>;
  /** The parameter style of the statements written out by hand. */
  protected readonly placeholder: Placeholder;
  protected readonly skipLocked: boolean;
  readonly #writes: Writes;
  readonly #reads: Reads;

  constructor(connection: Connection) {
    this.db = connection.db;
    this.placeholder = connection.placeholder;
    this.skipLocked = connection.skipLocked ?? false;
    this.#writes = connection.writes;
    this.#reads = connection.reads;
  }

  /** A write of one or more statements (built with `this.db`), all or none: the rows the first changed. */
  protected async write(...queries: Compilable[]): Promise<number> {
    const [first] = await this.#writes(queries.map((query) => query.compile()));
    return Number(first?.numAffectedRows ?? 0);
  }

  /** A write of statements that return rows (RETURNING), all or none: the rows of every statement. */
  protected async writeRows<T>(...queries: Compilable[]): Promise<T[]> {
    const results = await this.#writes(queries.map((query) => query.compile()));
    return results.flatMap((result) => result.rows as T[]);
  }

  /** A write of one or more statements, all or none: the rows each changed. */
  protected async writeCounts(...queries: Compilable[]): Promise<number[]> {
    const results = await this.#writes(queries.map((query) => query.compile()));
    return results.map((result) => Number(result.numAffectedRows ?? 0));
  }

  /** The rows of a statement written out by hand. */
  protected rows<T>(text: string, parameters: unknown[]): Promise<T[]> {
    return this.#reads(text, parameters) as Promise<T[]>;
  }

  /**
   * The row of `table` whose columns hold `key`'s values (null: `is null`), if any: a lookup by a key,
   * one column or several.
   */
  protected rowWith<T extends keyof Database>(
    table: T,
    key: Partial<Selectable<Database[T]>>,
  ): Promise<Selectable<Database[T]> | undefined> {
    const all = this.db.selectFrom(table as keyof Database).selectAll() as unknown as SelectQueryBuilder<
      Database,
      T,
      Selectable<Database[T]>
    >;
    return all.where((eb) => eb.and(key as FilterObject<Database, T>)).executeTakeFirst();
  }

  /** Whether `table` has a row whose columns hold `key`'s values (null: `is null`). */
  protected async hasRowWith<T extends keyof Database>(
    table: T,
    key: Partial<Selectable<Database[T]>>,
  ): Promise<boolean> {
    const one = this.db
      .selectFrom(table as keyof Database)
      .select(sql<number>`1`.as('one')) as unknown as SelectQueryBuilder<Database, T, { one: number }>;
    return (await one.where((eb) => eb.and(key as FilterObject<Database, T>)).executeTakeFirst()) !== undefined;
  }

  /**
   * The end of every session of the user but `keepSession` (issue 33: a changed password or a removed
   * factor signs out everywhere else), their clients told (./session-ends.ts); with `present`, only if
   * it finds a row when the statements run.
   */
  protected endOtherSessions(userId: string, keepSession: string, now: number, present?: EndCondition) {
    return endSessions(this.db, { userId, except: keepSession }, { now, when: present });
  }

  /** A change of one row (the first statement's), written with its event: whether it found the row. */
  protected async changeOne(event: SecurityEvent | undefined, ...queries: Compilable[]): Promise<boolean> {
    return (await this.write(...queries, ...this.events(event))) === 1;
  }

  /** The event that records a change, with its webhook deliveries, to write with the change (./outbox.ts). */
  protected events(event: SecurityEvent | undefined) {
    return insertEvents(this.db, [event]);
  }
}
