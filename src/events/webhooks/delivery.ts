// Delivering webhooks, at least once, from the outbox (webhook_deliveries, written in the same
// transaction as each event: ../../store/webhooks.ts), on the outbox worker mails share (../outbox.ts:
// claimed for a lease, on PostgreSQL with FOR UPDATE SKIP LOCKED, so each attempt is made by exactly
// one instance; surviving a crash). Each is POSTed as the Standard Webhooks specification says
// (webhook-id, webhook-timestamp, webhook-signature) and the attempt logged: a 2xx delivers; anything
// else is tried again after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (about a day and a quarter in
// all), then given up as failed.
//
// Each attempt runs on its own deadline (TIMEOUT_MS over the whole exchange) and a look at the outbox
// never waits for the attempts it starts: what is due is taken as long as this instance has slots
// free, at most `perHost` attempts run at once to one receiver host and the rest of its deliveries
// wait their turn (./receivers.ts); while a host is busy, the outbox is read past its webhooks'
// deliveries, so that a backlog for it never stands in front of anyone else's. So a receiver that
// answers in ten seconds, or forty webhooks pointed at one, delays its own deliveries and nobody else's.
import type { Delivery, Webhook, WebhookStore } from '../../store/webhooks.ts';
import { fetchOutbound, OutboundError } from '../../net/outbound.ts';
import { type OutboxLog, outboxOutcome, OutboxWorker } from '../outbox.ts';
import { type ReceiverLimits, ReceiverSlots } from './receivers.ts';
import { signWebhook } from './signature.ts';
import { openWebhookSecret } from './subscriptions.ts';
import type { Secrets } from '../../tokens/secrets.ts';

export { RETRY_DELAYS } from '../outbox.ts';
/** Seconds a delivery is held by the instance attempting it. */
const LEASE = 60;
/** The most deliveries taken in one look. */
const BATCH = 50;
const TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 64 * 1024;
export const RECEIVER_LIMITS: ReceiverLimits = { concurrent: 64, perHost: 4, queuedPerHost: 1_000 };
/** Webhooks of busy hosts passed over in one look at most (the rest are taken and wait their turn). */
const SKIPPED = 500;

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
  limits?: ReceiverLimits;
}

export class WebhookDelivery {
  readonly #store: WebhookStore;
  readonly #options: WebhookDeliveryOptions;
  readonly #now: () => number;
  readonly #slots: ReceiverSlots;
  readonly #worker: OutboxWorker<Delivery>;
  /** The webhooks seen for each receiver host, to pass over while the host is busy. */
  readonly #webhooksByHost = new Map<string, Set<string>>();
  /** The webhooks read for the deliveries of the current look. */
  #webhooks = new Map<string, Promise<Webhook | undefined>>();

  constructor(store: WebhookStore, options: WebhookDeliveryOptions) {
    this.#store = store;
    this.#options = options;
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.#slots = new ReceiverSlots(options.limits ?? RECEIVER_LIMITS);
    this.#worker = new OutboxWorker<Delivery>(
      {
        name: 'webhooks',
        lease: LEASE,
        capacity: () => Math.min(BATCH, this.#slots.free),
        claim: (now, lease, limit) => {
          this.#webhooks = new Map();
          return this.#store.claimDeliveries(now, lease, limit, this.#busyWebhooks());
        },
        attempt: (delivery, latestStart) => this.#schedule(delivery, latestStart),
        // What waits for a host is left to its lease.
        stopping: () => this.#slots.clear(),
      },
      { interval: options.interval, now: this.#now, log: options.log },
    );
  }

  start(): void {
    this.#worker.start();
  }

  /** Stops looking, and waits for the attempts under way; what waits for a host is left to its lease. */
  stop(): Promise<void> {
    return this.#worker.stop();
  }

  /**
   * One look at the outbox, and the attempts of what it took (or their being left to their lease):
   * how many deliveries it took. For tests and tools; the running worker never waits for attempts.
   */
  runOnce(): Promise<number> {
    return this.#worker.runOnce();
  }

  /** The webhooks whose receiver host has no slot free: their deliveries would only wait. */
  #busyWebhooks(): string[] {
    const skip: string[] = [];
    for (const [host, webhooks] of this.#webhooksByHost) {
      if (!this.#slots.busy(host)) {
        this.#webhooksByHost.delete(host);
        continue;
      }
      for (const id of webhooks) if (skip.length < SKIPPED) skip.push(id);
    }
    return skip;
  }

  /** The delivery's attempt, in its receiver host's turn. */
  async #schedule(delivery: Delivery, latestStart: number): Promise<void> {
    const webhooks = this.#webhooks;
    let reading = webhooks.get(delivery.webhookId);
    if (!reading) webhooks.set(delivery.webhookId, (reading = this.#store.getWebhook(delivery.webhookId)));
    const url = (await reading)?.url;
    const host = url === undefined ? '' : (URL.parse(url)?.host ?? url);
    const seen = this.#webhooksByHost.get(host) ?? new Set<string>();
    this.#webhooksByHost.set(host, seen.add(delivery.webhookId));
    await this.#slots.submit(host, () => this.#attempt(delivery), latestStart);
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
