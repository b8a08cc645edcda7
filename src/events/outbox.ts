// The outbox worker the outboxes share: webhook deliveries (../webhooks/lanes.ts), mails
// (../mail/delivery.ts) and logout tokens (../logout/delivery.ts). Each is a table written in the
// same transaction as what causes its rows; every instance runs a worker per outbox that looks at it
// every `interval` seconds, claims what is due for a lease (on PostgreSQL with FOR UPDATE SKIP
// LOCKED, so each attempt is made by exactly one instance), makes the attempts and records each:
// done, due again after the next delay of the retry schedule, or given up once the schedule is
// spent. A process killed during an attempt loses nothing: its lease runs out and the row is due
// again. Requests never wait for any of this.

/** Seconds a claimed row is held by the instance attempting it: no other takes it until then. */
export const LEASE = 60;

/** Seconds to wait after the n-th failed attempt of a round (Standard Webhooks' schedule). */
export const RETRY_DELAYS = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];

/** What an attempt's result makes of its row: done, given up, or due again at `nextAttemptAt`. */
export type OutboxOutcome<Done extends string> =
  { status: Done | 'failed' } | { status: 'pending'; nextAttemptAt: number };

/**
 * After attempt number `attempt` (counted from `retryBase`, the attempts before the last manual
 * retry) at `at`: `done` when it succeeded, else the next try on the schedule or `failed`.
 */
export function outboxOutcome<Done extends string>(
  done: Done,
  attempt: { attempt: number; retryBase: number; at: number; succeeded: boolean },
): OutboxOutcome<Done> {
  if (attempt.succeeded) return { status: done };
  const round = attempt.attempt - attempt.retryBase;
  if (round > RETRY_DELAYS.length) return { status: 'failed' };
  return { status: 'pending', nextAttemptAt: attempt.at + RETRY_DELAYS[round - 1]! };
}

export interface OutboxLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface OutboxWorkerOptions {
  /** Seconds between looks at the outbox. */
  interval: number;
  now?: () => number;
  log: OutboxLog;
}

/**
 * A worker of one outbox: what it claims and how it attempts a row are its subclass's (the webhooks'
 * lanes, mails, logout tokens); the looks, the log of a database away and the wait at stop are here.
 */
export abstract class OutboxWorker<Row extends { id: string }> {
  /** Its name in the log: `webhooks (users')`, `mail`. */
  readonly #name: string;
  readonly #interval: number;
  protected readonly now: () => number;
  protected readonly log: OutboxLog;
  #timer: NodeJS.Timeout | undefined;
  #looking: Promise<Array<Promise<unknown>>> | undefined;
  /** Every row taken and not yet attempted or left: what stop() waits for. */
  readonly #pending = new Set<Promise<unknown>>();

  constructor(name: string, options: OutboxWorkerOptions) {
    this.#name = name;
    this.#interval = options.interval;
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.log = options.log;
  }

  /** The most rows to claim now (free slots, at most a batch). */
  protected abstract capacity(): number;
  /** Claims up to `limit` rows due at `now` for `lease` seconds. */
  protected abstract claim(now: number, lease: number, limit: number): Promise<Row[]>;
  /** Attempts the row and records the attempt; `latestStart` (ms) is when an attempt may still begin. */
  protected abstract attempt(row: Row, latestStart: number): Promise<void>;
  /** Said when the worker stops, before it waits for the attempts under way. */
  protected stopping(): void {}

  /** The rows taken and not yet attempted or left. */
  protected get inFlight(): number {
    return this.#pending.size;
  }

  start(): void {
    this.#timer = setInterval(() => void this.#look(), this.#interval * 1000);
    this.#timer.unref();
  }

  /** Stops looking, and waits for the attempts under way. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#looking;
    this.stopping();
    await Promise.all(this.#pending);
  }

  /** One look at the outbox and the attempts of what it took: how many rows it took. For tests and tools. */
  async runOnce(): Promise<number> {
    const taken = await this.#look();
    await Promise.all(taken);
    return taken.length;
  }

  /** One look at a time. */
  #look(): Promise<Array<Promise<unknown>>> {
    this.#looking ??= this.#takeDue().finally(() => (this.#looking = undefined));
    return this.#looking;
  }

  async #takeDue(): Promise<Array<Promise<unknown>>> {
    const name = this.#name;
    const limit = this.capacity();
    if (limit <= 0) return [];
    let claimed: Row[];
    try {
      claimed = await this.claim(this.now(), LEASE, limit);
    } catch (err) {
      // The database is away: the outbox waits, and nothing is lost.
      this.log.warn({ err: (err as Error).message }, `${name}: the outbox cannot be read`);
      return [];
    }
    // An attempt must start early enough to end (10 s) before its lease does.
    const latestStart = Date.now() + (LEASE * 1000 - 15_000);
    return claimed.map((row) => {
      const pending = this.attempt(row, latestStart).catch((err: unknown) => {
        // Not attempted or not recorded (the database went away): its lease runs out and it is due again.
        this.log.error({ err: (err as Error).message, id: row.id }, `${name}: attempt not made`);
      });
      this.#pending.add(pending);
      void pending.finally(() => this.#pending.delete(pending));
      return pending;
    });
  }
}
