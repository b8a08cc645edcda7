// How many attempts run at once, in all and per receiver host (./delivery.ts). A receiver that
// answers slowly, or not at all until the deadline, holds at most `perHost` attempts; what else is
// due for it waits in its host's queue, and everything for other hosts goes ahead. So one slow
// receiver, or forty webhooks pointed at it, delays only its own deliveries.

export interface ReceiverLimits {
  /** Attempts under way at once on this instance. */
  concurrent: number;
  /** Attempts under way at once to one host (host:port of the webhook's URL). */
  perHost: number;
  /** Deliveries waiting for a host at most; beyond, they wait for their lease to run out. */
  queuedPerHost: number;
}

interface Waiting {
  run: () => Promise<void>;
  /** Epoch ms after which it must not start: its lease would end before its attempt could. */
  latestStart: number;
  dropped: () => void;
}

export class ReceiverSlots {
  readonly #limits: ReceiverLimits;
  #running = 0;
  readonly #byHost = new Map<string, number>();
  readonly #queues = new Map<string, Waiting[]>();

  constructor(limits: ReceiverLimits) {
    this.#limits = limits;
  }

  /** Slots free on this instance: how many more deliveries to take from the outbox. */
  get free(): number {
    return Math.max(0, this.#limits.concurrent - this.#running);
  }

  /** Whether the host has no slot free: what is due for it now would only wait. */
  busy(host: string): boolean {
    return (this.#byHost.get(host) ?? 0) >= this.#limits.perHost;
  }

  /**
   * Runs `run` now if the host has a slot, later if it has room in its queue; resolves once it has
   * run, or been left for its lease to run out (`false`).
   */
  submit(host: string, run: () => Promise<void>, latestStart: number): Promise<boolean> {
    if ((this.#byHost.get(host) ?? 0) < this.#limits.perHost) return this.#start(host, run).then(() => true);
    const queue = this.#queues.get(host) ?? [];
    if (queue.length >= this.#limits.queuedPerHost) return Promise.resolve(false);
    this.#queues.set(host, queue);
    return new Promise((resolve) => {
      queue.push({ run: () => run().finally(() => resolve(true)), latestStart, dropped: () => resolve(false) });
    });
  }

  /** Forgets what waits (stopping): each is left for its lease to run out. */
  clear(): void {
    for (const queue of this.#queues.values()) for (const waiting of queue) waiting.dropped();
    this.#queues.clear();
  }

  async #start(host: string, run: () => Promise<void>): Promise<void> {
    this.#running++;
    this.#byHost.set(host, (this.#byHost.get(host) ?? 0) + 1);
    try {
      await run();
    } finally {
      this.#running--;
      const left = this.#byHost.get(host)! - 1;
      if (left > 0) this.#byHost.set(host, left);
      else this.#byHost.delete(host);
      this.#next(host);
    }
  }

  /** The host's next waiting delivery whose lease still has room for an attempt. */
  #next(host: string): void {
    const queue = this.#queues.get(host);
    let waiting = queue?.shift();
    while (waiting && waiting.latestStart < Date.now()) {
      waiting.dropped();
      waiting = queue!.shift();
    }
    if (queue?.length === 0) this.#queues.delete(host);
    // An attempt records its own failures (./delivery.ts); nothing is left to catch here.
    if (waiting) this.#start(host, waiting.run).catch(() => undefined);
  }
}
