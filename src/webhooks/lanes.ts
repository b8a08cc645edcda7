// The two lanes webhooks are delivered on (./delivery.ts): the operator's subscriptions (made with the
// CLI: no owner) on one, users' (made through /api/webhooks) on the other. Each lane claims only its
// own deliveries from the outbox and has its own worker and its own attempt slots, so however many
// receivers users point at a server that never answers, the operator's deliveries are claimed and
// attempted as if there were none.
//
// Within a lane, each subscription gets its turn: a claim goes round the webhooks, first due first,
// one delivery of each before a second of any, and passes over a webhook with `perWebhook` deliveries
// leased already by any instance (../../store/webhooks.ts); on this instance, at most `perHost`
// attempts run at once to one receiver host and the rest wait their turn (./receivers.ts), and while a
// host is busy the claim passes over its webhooks. So a slow receiver holds a few slots for its own
// deliveries, and the others' are taken in the same look.
import type { Delivery, Webhook, WebhookStore } from '../store/webhooks.ts';
import { OutboxWorker, type OutboxWorkerOptions } from '../events/outbox.ts';
import { type ReceiverLimits, ReceiverSlots } from './receivers.ts';

/** The most deliveries taken in one look. */
const BATCH = 50;
/** Webhooks of busy hosts passed over in one look at most (the rest are taken and wait their turn). */
const SKIPPED = 500;

export interface LaneSettings {
  /** The operator's lane, or users'. */
  operator: boolean;
  limits: ReceiverLimits;
  /** The most deliveries of one webhook leased at once, across instances. */
  perWebhook: number;
}

/**
 * The operator's lane: a few trusted subscriptions that may receive every event of a busy server, so
 * as many of one's deliveries at once as a look takes.
 */
export const OPERATOR_LANE: LaneSettings = {
  operator: true,
  limits: { concurrent: 32, perHost: 8, queuedPerHost: 1_000 },
  perWebhook: BATCH,
};

/**
 * Users' lane: many subscriptions, each hearing of one user and their apps, none trusted to answer;
 * two of one webhook's deliveries under way at once, so that slow receivers hold few slots each.
 */
export const USERS_LANE: LaneSettings = {
  operator: false,
  limits: { concurrent: 64, perHost: 4, queuedPerHost: 1_000 },
  perWebhook: 2,
};

export class DeliveryLane extends OutboxWorker<Delivery> {
  readonly #store: WebhookStore;
  readonly #slots: ReceiverSlots;
  readonly #settings: LaneSettings;
  readonly #attempt: (delivery: Delivery) => Promise<void>;
  /** The webhooks seen for each receiver host, to pass over while the host is busy. */
  readonly #webhooksByHost = new Map<string, Set<string>>();
  /** The webhooks read for the deliveries of the current look. */
  #webhooks = new Map<string, Promise<Webhook | undefined>>();

  constructor(
    store: WebhookStore,
    settings: LaneSettings,
    attempt: (delivery: Delivery) => Promise<void>,
    options: OutboxWorkerOptions,
  ) {
    super(settings.operator ? "webhooks (operator's)" : "webhooks (users')", options);
    this.#store = store;
    this.#settings = settings;
    this.#attempt = attempt;
    this.#slots = new ReceiverSlots(settings.limits);
  }

  protected capacity(): number {
    return Math.min(BATCH, this.#slots.free);
  }

  protected claim(now: number, lease: number, limit: number): Promise<Delivery[]> {
    const { operator, perWebhook } = this.#settings;
    this.#webhooks = new Map();
    return this.#store.claimDeliveries(now, lease, limit, { operator, perWebhook, skip: this.#busyWebhooks() });
  }

  /** What waits for a host is left to its lease. */
  protected override stopping(): void {
    this.#slots.clear();
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
  protected async attempt(delivery: Delivery, latestStart: number): Promise<void> {
    const webhooks = this.#webhooks;
    let reading = webhooks.get(delivery.webhookId);
    if (!reading) webhooks.set(delivery.webhookId, (reading = this.#store.getWebhook(delivery.webhookId)));
    const url = (await reading)?.url;
    const host = url === undefined ? '' : (URL.parse(url)?.host ?? url);
    const seen = this.#webhooksByHost.get(host) ?? new Set<string>();
    this.#webhooksByHost.set(host, seen.add(delivery.webhookId));
    await this.#slots.submit(host, () => this.#attempt(delivery), latestStart);
  }
}
