// Group commit for SQLite. Every write on SQLite is serialized on one connection anyway, and with
// synchronous=FULL each commit waits for an fsync. So writes that arrive together share one
// transaction — each inside its own savepoint, keeping it atomic on its own — and one fsync; every
// caller's promise resolves only after that commit, so a response never hands out what is not yet
// durable.
//
// The batch holds Kysely's connection (nothing else runs on it meanwhile) and drives the
// transaction and the savepoints with statements prepared once on the node:sqlite connection: built
// and compiled through Kysely each time, those four statements per write cost more than the write
// itself (bench/RESULTS.md, item 11).
import type { Kysely } from 'kysely';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { Database } from '../types.ts';

interface Pending {
  op: (db: Kysely<Database>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit {
  readonly #db: Kysely<Database>;
  readonly #control: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', StatementSync>;
  readonly #sqlite: DatabaseSync;
  #pending: Pending[] = [];
  #flushing = false;

  /** `sqlite` is the connection under `db`'s dialect. */
  constructor(db: Kysely<Database>, sqlite: DatabaseSync) {
    this.#db = db;
    this.#sqlite = sqlite;
    this.#control = {
      begin: sqlite.prepare('begin'),
      commit: sqlite.prepare('commit'),
      rollback: sqlite.prepare('rollback'),
      savepoint: sqlite.prepare('savepoint tessera_op'),
      release: sqlite.prepare('release tessera_op'),
      rollbackTo: sqlite.prepare('rollback to tessera_op'),
    };
  }

  run<T>(op: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ op, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        // Let the requests already received enqueue their writes before the batch starts.
        setImmediate(() => void this.#flush());
      }
    });
  }

  async #flush(): Promise<void> {
    const batch = this.#pending;
    this.#pending = [];
    const control = this.#control;
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      await this.#db.connection().execute(async (db) => {
        control.begin.run();
        try {
          for (const item of batch) {
            control.savepoint.run();
            try {
              outcomes.push({ ok: true, value: await item.op(db) });
              control.release.run();
            } catch (error) {
              control.rollbackTo.run();
              control.release.run();
              outcomes.push({ ok: false, error });
            }
          }
          control.commit.run();
        } catch (error) {
          if (this.#sqlite.isTransaction) control.rollback.run();
          throw error;
        }
      });
      batch.forEach((item, i) => {
        const outcome = outcomes[i]!;
        if (outcome.ok) item.resolve(outcome.value);
        else item.reject(outcome.error);
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
    }
    if (this.#pending.length > 0) setImmediate(() => void this.#flush());
    else this.#flushing = false;
  }
}
