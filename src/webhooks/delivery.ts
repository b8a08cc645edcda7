// Delivering webhooks, at least once, from the outbox (webhook_deliveries, written in the same
// transaction as each event: ../../store/webhooks.ts), on the outbox worker mails share (../outbox.ts:
// claimed for a lease, on PostgreSQL with FOR UPDATE SKIP LOCKED, so each attempt is made by exactly
// one instance; surviving a crash). Each is POSTed as the Standard Webhooks specification says
// (webhook-id, webhook-timestamp, webhook-signature) and the attempt logged: a 2xx delivers; anything
// else is tried again after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (about a day and a quarter in
// all), then given up as failed.
//
// Each attempt runs on its own deadline (TIMEOUT_MS over the whole exchange) and a look at the outbox
// never waits for the attempts it starts. Deliveries go on two lanes (./lanes.ts), the operator's
// subscriptions' and users', each claimed and attempted by a worker of its own, so that users'
// receivers, however slow, never delay the operator's; and within a lane each subscription gets its
// turn, so that one slow receiver delays its own deliveries and nobody else's.
import type { Delivery, WebhookStore } from '../store/webhooks.ts';
import { fetchOutbound, OutboundError } from '../net/outbound.ts';
import { type OutboxLog, outboxOutcome } from '../events/outbox.ts';
import { DeliveryLane, OPERATOR_LANE, USERS_LANE } from './lanes.ts';
import { signWebhook } from './signature.ts';
import { openWebhookSecret } from './subscriptions.ts';
import type { Secrets } from '../tokens/secrets.ts';

export { RETRY_DELAYS } from '../events/outbox.ts';
const TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 64 * 1024;

export type DeliveryLog = OutboxLog;

export interface WebhookDeliveryOptions {
  /** TESSERA_SECRET (and the previous secrets), which the webhooks' secrets are encrypted under. */
  secret: Secrets;
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
  /** The operator's lane and users'. */
  readonly #lanes: DeliveryLane[];

  constructor(store: WebhookStore, options: WebhookDeliveryOptions) {
    this.#store = store;
    this.#options = options;
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000));
    const attempt = (delivery: Delivery) => this.#attempt(delivery);
    const lane = { interval: options.interval, now: this.#now, log: options.log };
    this.#lanes = [OPERATOR_LANE, USERS_LANE].map((settings) => new DeliveryLane(store, settings, attempt, lane));
  }

  start(): void {
    for (const lane of this.#lanes) lane.start();
  }

  /** Stops looking, and waits for the attempts under way; what waits for a host is left to its lease. */
  async stop(): Promise<void> {
    await Promise.all(this.#lanes.map((lane) => lane.stop()));
  }

  /**
   * One look at the outbox on each lane, and the attempts of what they took (or their being left to
   * their lease): how many deliveries were taken. For tests and tools; the running workers never wait
   * for attempts.
   */
  async runOnce(): Promise<number> {
    const taken = await Promise.all(this.#lanes.map((lane) => lane.runOnce()));
    return taken.reduce((a, b) => a + b, 0);
  }

  /** An attempt, with the webhook as it is now (deleted or given a new secret while it waited). */
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
      const retryBase = delivery.retryBase;
      const outcome = outboxOutcome('delivered', { attempt, retryBase, at, succeeded: error === null });
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
