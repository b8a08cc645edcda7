// Group commit for SQLite. Every write on SQLite is serialized on one connection anyway, and with
// synchronous=FULL each commit waits for an fsync. So writes that arrive together share one
// transaction — each inside its own savepoint, keeping it atomic on its own — and one fsync; every
// caller's promise resolves only after that commit, so a response never hands out what is not yet
// durable.
import { type Kysely, sql } from 'kysely';
import type { Database } from './types.ts';

interface Pending {
  op: (db: Kysely<Database>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit {
  readonly #db: Kysely<Database>;
  #pending: Pending[] = [];
  #flushing = false;

  constructor(db: Kysely<Database>) {
    this.#db = db;
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
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      await this.#db.transaction().execute(async (trx) => {
        for (const item of batch) {
          await sql`savepoint tessera_op`.execute(trx);
          try {
            outcomes.push({ ok: true, value: await item.op(trx) });
            await sql`release tessera_op`.execute(trx);
          } catch (error) {
            await sql`rollback to tessera_op`.execute(trx);
            await sql`release tessera_op`.execute(trx);
            outcomes.push({ ok: false, error });
          }
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
