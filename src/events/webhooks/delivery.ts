// Delivering webhooks, at least once, from the outbox (webhook_deliveries, written in the same
// transaction as each event: ../../store/webhooks.ts). Every instance runs a worker; each takes the
// deliveries that are due for a lease (on PostgreSQL with FOR UPDATE SKIP LOCKED, so each attempt is
// made by exactly one), POSTs them as the Standard Webhooks specification says (webhook-id,
// webhook-timestamp, webhook-signature), and logs the attempt: a 2xx delivers; anything else is tried
// again after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (about a day and a quarter in all), then
// given up as failed. A process killed during an attempt loses nothing: its lease runs out and the
// delivery is due again. Requests never wait for any of this.
import type { Delivery, WebhookStore } from '../../store/webhooks.ts';
import { fetchOutbound, OutboundError } from '../../http/outbound.ts';
import { signWebhook } from './signature.ts';
import { openWebhookSecret } from './subscriptions.ts';

/** Seconds to wait after the n-th failed attempt of a round (Standard Webhooks' schedule). */
export const RETRY_DELAYS = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];
/** Seconds a delivery is held by the instance attempting it. */
const LEASE = 60;
const BATCH = 20;
const TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 64 * 1024;

export interface DeliveryLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface WebhookDeliveryOptions {
  /** TESSERA_SECRET, which the webhooks' secrets are encrypted under. */
  secret: string;
  /** TESSERA_OUTBOUND_ALLOW_PRIVATE: receivers on private addresses, and on plain http. */
  allowPrivate: boolean;
  /** Seconds between looks at the outbox. */
  interval: number;
  now?: () => number;
  log: DeliveryLog;
  /** Counts the attempts (the metrics). */
  onAttempt?: (result: 'delivered' | 'retry' | 'failed') => void;
}

export class WebhookDelivery {
  readonly #store: WebhookStore;
  readonly #options: WebhookDeliveryOptions;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;

  constructor(store: WebhookStore, options: WebhookDeliveryOptions) {
    this.#store = store;
    this.#options = options;
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000));
  }

  start(): void {
    this.#timer = setInterval(() => void this.runOnce(), this.#options.interval * 1000);
    this.#timer.unref();
  }

  /** Stops looking, and waits for the attempts under way. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running?.catch(() => 0);
  }

  /** One look at the outbox: attempts what is due; how many it attempted. One look at a time. */
  runOnce(): Promise<number> {
    this.#running ??= this.#deliverDue().finally(() => (this.#running = undefined));
    return this.#running;
  }

  async #deliverDue(): Promise<number> {
    let claimed: Delivery[];
    try {
      claimed = await this.#store.claimDeliveries(this.#now(), LEASE, BATCH);
    } catch (err) {
      // The database is away: the outbox waits, and nothing is lost.
      this.#options.log.warn({ err: (err as Error).message }, 'webhooks: the outbox cannot be read');
      return 0;
    }
    await Promise.all(claimed.map((delivery) => this.#attempt(delivery)));
    return claimed.length;
  }

  async #attempt(delivery: Delivery): Promise<void> {
    const { log } = this.#options;
    const attempt = delivery.attempts + 1;
    const at = this.#now();
    let status: number | null = null;
    let error: string | null = null;
    let ms = 0;
    try {
      const webhook = await this.#store.getWebhook(delivery.webhookId);
      if (!webhook) {
        await this.#store.recordAttempt(
          { deliveryId: delivery.id, attempt, at, status: null, durationMs: 0, error: 'the webhook was deleted' },
          { status: 'failed' },
        );
        return;
      }
      const secrets = [openWebhookSecret(webhook.secretEnc, this.#options.secret)];
      if (webhook.previousSecretEnc && (webhook.previousUntil ?? 0) > at) {
        secrets.push(openWebhookSecret(webhook.previousSecretEnc, this.#options.secret));
      }
      const signature = secrets.map((s) => signWebhook(s, delivery.id, at, delivery.payload)).join(' ');
      try {
        const response = await fetchOutbound(webhook.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'Tessera-Webhooks/1',
            'webhook-id': delivery.id,
            'webhook-timestamp': String(at),
            'webhook-signature': signature,
          },
          body: delivery.payload,
          timeoutMs: TIMEOUT_MS,
          maxBytes: MAX_RESPONSE_BYTES,
          allowPrivate: this.#options.allowPrivate,
          allowHttp: this.#options.allowPrivate,
        });
        status = response.status;
        ms = response.ms;
        if (status < 200 || status >= 300) error = `the receiver answered HTTP ${status}`;
      } catch (err) {
        if (!(err instanceof OutboundError)) throw err;
        error = `${err.reason}: ${err.message}`.slice(0, 500);
      }
      const round = attempt - delivery.retryBase;
      const outcome =
        error === null
          ? ({ status: 'delivered' } as const)
          : round > RETRY_DELAYS.length
            ? ({ status: 'failed' } as const)
            : ({ status: 'pending', nextAttemptAt: at + RETRY_DELAYS[round - 1]! } as const);
      await this.#store.recordAttempt({ deliveryId: delivery.id, attempt, at, status, durationMs: ms, error }, outcome);
      this.#options.onAttempt?.(outcome.status === 'pending' ? 'retry' : outcome.status);
      const fields = { delivery: delivery.id, webhook: webhook.id, attempt, status, ms };
      if (outcome.status === 'failed') log.warn({ ...fields, error }, 'webhook delivery failed for good');
      else if (error !== null) log.info({ ...fields, error }, 'webhook delivery will be tried again');
    } catch (err) {
      // Not recorded (the database went away): the lease runs out and the delivery is due again.
      log.error({ err: (err as Error).message, delivery: delivery.id }, 'webhook attempt not recorded');
    }
  }
}
