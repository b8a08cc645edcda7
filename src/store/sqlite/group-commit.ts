// Group commit for SQLite. Every write on SQLite is serialized on one connection anyway, and with
// synchronous=FULL each commit waits for an fsync. So writes that arrive together share one
// transaction — each inside its own savepoint, keeping it atomic on its own — and one fsync; every
// caller's promise resolves only after that commit, so a response never hands out what is not yet
// durable. The transaction and the savepoints are statements prepared once: built and compiled
// through Kysely each time, they cost more than the write itself (bench/RESULTS.md, item 11).
import type { DatabaseSync, StatementSync } from 'node:sqlite';

interface Pending {
  op: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit {
  readonly #sqlite: DatabaseSync;
  readonly #control: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', StatementSync>;
  #pending: Pending[] = [];

  constructor(sqlite: DatabaseSync) {
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

  /** Writes waiting for the next transaction. */
  get queued(): number {
    return this.#pending.length;
  }

  /** Runs `op` (synchronous statements on the connection) in the next transaction; resolves after its commit. */
  run<T>(op: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // Let the requests already received enqueue their writes before the batch starts.
      if (this.#pending.length === 0) setImmediate(() => this.#flush());
      this.#pending.push({ op, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  #flush(): void {
    const batch = this.#pending;
    this.#pending = [];
    const control = this.#control;
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      control.begin.run();
      for (const item of batch) {
        control.savepoint.run();
        try {
          outcomes.push({ ok: true, value: item.op() });
          control.release.run();
        } catch (error) {
          control.rollbackTo.run();
          control.release.run();
          outcomes.push({ ok: false, error });
        }
      }
      control.commit.run();
    } catch (error) {
      // The commit failed (a full disk, a read-only file) or SQLite rolled the transaction back by
      // itself: nothing of the batch is stored, every caller hears why, and the next batch starts
      // afresh. A rollback that fails too must not end the thread.
      try {
        if (this.#sqlite.isTransaction) control.rollback.run();
      } catch {
        // Nothing more to undo: the transaction is gone with the error.
      }
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}
