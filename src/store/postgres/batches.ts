// Statement batching for PostgreSQL, the counterpart of SQLite's group commit (../sqlite/group-commit.ts).
// On PostgreSQL each statement costs its backend an executor start-up and, for a write, a commit
// with its WAL flush, and it costs this process a round trip. The hot writes (a code's redemption,
// a refresh token's rotation) are conditional writes on one row each, so several of them can be one
// statement over arrays (`… from unnest($1::text[], …)`): each row still either matches its
// condition or not, the statement commits before any caller hears back, and the rows it returns
// say which callers won.
//
// At most `lanes` batches are in flight; calls that arrive meanwhile wait and go together as the
// next batch. Under light load a batch is one call and waits for nothing; under load batches grow
// with the queue. Two calls with the same key (the same code, the same token family) are never in
// flight together: the later one waits for the next batch, so it sees the earlier one's outcome, as
// it would have as a statement of its own. A batch goes in the order of its keys, so that batches
// lock rows in one order (here and on other instances) and do not deadlock each other. A batch
// whose statement fails wrote nothing; each of its calls is then run alone, so that one bad call
// fails by itself.
//
// Only writes are batched: a read has no commit to share, and a batched read (unnest … with
// ordinality, joined) cost PostgreSQL more per call than the plain statement (bench/RESULTS.md).

/** Runs a batch as one statement; returns the results of the calls that won, by key. */
export type BatchStatement<Item, Result> = (items: Item[]) => Promise<Map<string, Result>>;

interface Waiting<Item, Result> {
  item: Item;
  key: string;
  resolve: (result: Result | undefined) => void;
  reject: (error: unknown) => void;
}

export class StatementBatches<Item, Result> {
  readonly #statement: BatchStatement<Item, Result>;
  readonly #key: (item: Item) => string;
  readonly #lanes: number;
  readonly #maxBatch: number;
  #queue: Array<Waiting<Item, Result>> = [];
  #inFlight = 0;
  /** The keys of the batches in flight. */
  readonly #busy = new Set<string>();

  constructor(options: {
    statement: BatchStatement<Item, Result>;
    key: (item: Item) => string;
    lanes?: number;
    maxBatch?: number;
  }) {
    this.#statement = options.statement;
    this.#key = options.key;
    this.#lanes = options.lanes ?? 2;
    this.#maxBatch = options.maxBatch ?? 64;
  }

  /** The call's result, or undefined when its row did not match (it lost, or its condition failed). */
  run(item: Item): Promise<Result | undefined> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, key: this.#key(item), resolve, reject });
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (this.#inFlight < this.#lanes && this.#queue.length > 0) {
      const batch: Array<Waiting<Item, Result>> = [];
      const later: Array<Waiting<Item, Result>> = [];
      for (const waiting of this.#queue) {
        if (batch.length < this.#maxBatch && !this.#busy.has(waiting.key)) {
          this.#busy.add(waiting.key);
          batch.push(waiting);
        } else {
          later.push(waiting);
        }
      }
      this.#queue = later;
      if (batch.length === 0) return;
      batch.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      this.#inFlight++;
      void this.#send(batch);
    }
  }

  /** The batch's lane is free again, and its keys: the next batch goes. */
  #release(batch: Array<Waiting<Item, Result>>): void {
    for (const waiting of batch) this.#busy.delete(waiting.key);
    this.#inFlight--;
    this.#dispatch();
  }

  async #send(batch: Array<Waiting<Item, Result>>): Promise<void> {
    let results: Map<string, Result>;
    try {
      results = await this.#statement(batch.map((w) => w.item));
    } catch (error) {
      if (batch.length === 1) {
        this.#release(batch);
        batch[0]!.reject(error);
        return;
      }
      // The statement is atomic: nothing of the batch was written. Each call on its own, in a lane of its own.
      this.#inFlight += batch.length - 1;
      for (const w of batch) void this.#send([w]);
      return;
    }
    // The next batch goes before the callers go on with their results (signing tokens, answering).
    this.#release(batch);
    for (const w of batch) w.resolve(results.get(w.key));
  }
}
