// Webhook subscriptions, their deliveries (the outbox, filled with each event by ./outbox.ts) and the
// log of attempts (src/webhooks): what the store answers about them, the objects (camelCase)
// and their rows (./tables.ts) both ways, and their Kysely code.
import type { ExpressionBuilder, OnConflictBuilder } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import type { OutboxOutcome } from '../events/outbox.ts';
import type { AggregateClass } from './aggregate.ts';
import { columns, renamed } from './columns.ts';
import { attemptRecorded, claimEntries, dueEntries, insertEventsIf, insertEventsWhen } from './outbox.ts';
import type { OutboxEntry } from './outbox.ts';
import { deliveriesInTurn, type LaneClaim } from './webhook-turns.ts';

export type { LaneClaim } from './webhook-turns.ts';
import type { Database, WebhookAttemptRow, WebhookDeliveryRow, WebhookRow } from './tables.ts';

/** A webhook subscription: where, which event types, and its signing secret (encrypted). */
export interface Webhook {
  id: string;
  url: string;
  /** Space-separated event types, or `*` (EVERY_EVENT_TYPE): every type, those added later too. */
  events: string;
  /** The user whose webhook it is (created with a `webhooks` token); null for the operator's. */
  ownerId: string | null;
  secretEnc: string;
  /** The secret before the last rotation, still signing alongside until previousUntil. */
  previousSecretEnc: string | null;
  previousUntil: number | null;
  createdAt: number;
}

/** One event for one webhook: the outbox's entry, written in the same transaction as the event. */
export interface Delivery extends OutboxEntry<'delivered'> {
  /** `{event id}.{webhook id}`: the webhook-id header, the same on every attempt. */
  id: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  /** The JSON body sent. */
  payload: string;
  lastStatus: number | null;
}

/** One attempt of a delivery: its answer's status (null when none came), how long it took, what failed. */
export interface DeliveryAttempt {
  deliveryId: string;
  attempt: number;
  at: number;
  status: number | null;
  durationMs: number;
  error: string | null;
}

/** Webhook subscriptions, their outbox of deliveries and the log of attempts (src/webhooks). */
export interface WebhookStore {
  /**
   * Creates the webhook; for a user's, only while the user exists and has fewer than `perOwner`
   * webhooks, checked in the same write (concurrent creations are counted one after another): false,
   * having written nothing, past the limit.
   */
  createWebhook(webhook: Webhook, event?: SecurityEvent, perOwner?: number): Promise<boolean>;
  getWebhook(id: string): Promise<Webhook | undefined>;
  /** Every webhook (`undefined`), the operator's (`null`), or a user's. */
  listWebhooks(ownerId?: string | null): Promise<Webhook[]>;
  /** Replaces its URL and event types; false when there is none. */
  updateWebhook(id: string, changes: { url: string; events: string }, event?: SecurityEvent): Promise<boolean>;
  /** Deletes the webhook and its deliveries not yet made; false when there was none. */
  deleteWebhook(id: string, event?: SecurityEvent): Promise<boolean>;
  /**
   * A new secret; the one before keeps signing alongside until `previousUntil`. The event is written
   * only if the webhook is there; false when there is none.
   */
  rotateWebhookSecret(
    id: string,
    secrets: { secretEnc: string; previousSecretEnc: string; previousUntil: number },
    event?: SecurityEvent,
  ): Promise<boolean>;
  /** A delivery of its own (`tessera webhooks test`), not an event's, with the event that records it. */
  enqueueDelivery(delivery: Delivery, event?: SecurityEvent): Promise<void>;
  /**
   * Takes up to `limit` deliveries of `lane` due at `now` for `lease` seconds: no other instance takes
   * them meanwhile (on PostgreSQL, FOR UPDATE SKIP LOCKED), and if this one dies they are due again after.
   */
  claimDeliveries(now: number, lease: number, limit: number, lane: LaneClaim): Promise<Delivery[]>;
  /** Logs an attempt and moves the delivery on: delivered, due again at `nextAttemptAt`, or failed. */
  recordAttempt(attempt: DeliveryAttempt, outcome: OutboxOutcome<'delivered'>): Promise<void>;
  getDelivery(id: string): Promise<Delivery | undefined>;
  /** A webhook's deliveries, newest first. */
  listDeliveries(webhookId: string, limit: number): Promise<Delivery[]>;
  listAttempts(deliveryId: string): Promise<DeliveryAttempt[]>;
  /**
   * Makes a delivery due again now, with a fresh count of attempts, and writes the event only if the
   * delivery is there; false when there is none.
   */
  redeliver(id: string, now: number, event?: SecurityEvent): Promise<boolean>;
  /**
   * The deliveries not yet made (due, or waiting to be tried again) and when the oldest of them was
   * enqueued (null when none): the metrics of the webhook backlog.
   */
  deliveryBacklog(): Promise<{ pending: number; oldestCreatedAt: number | null }>;
}

const webhookRows = renamed(
  columns<WebhookRow>()('id url events owner_id secret_enc previous_secret_enc previous_until created_at'),
);
const toWebhook: (row: WebhookRow) => Webhook = webhookRows.to;
const fromWebhook: (webhook: Webhook) => WebhookRow = webhookRows.from;

const deliveryRows = renamed(
  columns<WebhookDeliveryRow>()(
    'id webhook_id event_id event_type payload status attempts retry_base next_attempt_at',
    'locked_until created_at last_status last_error finished_at',
  ),
);
const toDelivery: (row: WebhookDeliveryRow) => Delivery = deliveryRows.to;
const fromDelivery: (delivery: Delivery) => WebhookDeliveryRow = deliveryRows.from;

const attemptRows = renamed(columns<WebhookAttemptRow>()('delivery_id attempt at status duration_ms error'));
const toAttempt: (row: WebhookAttemptRow) => DeliveryAttempt = attemptRows.to;
const fromAttempt: (attempt: DeliveryAttempt) => WebhookAttemptRow = attemptRows.from;

type Where<Table extends keyof Database> = ExpressionBuilder<Database, Table>;

/** Webhooks: the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withWebhooks<Base extends AggregateClass>(Base: Base) {
  abstract class Webhooks extends Base implements WebhookStore {
    async createWebhook(webhook: Webhook, event?: SecurityEvent, perOwner?: number): Promise<boolean> {
      const { ownerId } = webhook;
      if (ownerId === null || perOwner === undefined) {
        await this.write(this.db.insertInto('webhooks').values(fromWebhook(webhook)), ...this.events(event));
        return true;
      }
      const row = fromWebhook(webhook);
      // PostgreSQL: the owner's row locked first, so that a concurrent creation counts after this one
      // commits (SQLite has one writer, which runs writes one after another anyway).
      const owner = this.db
        .updateTable('users')
        .set((eb) => ({ updated_at: eb.ref('updated_at') }))
        .where('id', '=', ownerId);
      const owned = this.db
        .selectFrom('webhooks')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('owner_id', '=', ownerId);
      const values = this.db
        .selectFrom('users')
        .select((eb) => (Object.keys(row) as Array<keyof WebhookRow>).map((column) => eb.val(row[column]).as(column)))
        .where('id', '=', ownerId)
        .where(owned, '<', perOwner);
      const columns = Object.keys(row) as Array<keyof WebhookRow>;
      const inserted = this.db.insertInto('webhooks').columns(columns).expression(values).returning('id');
      const rows = await this.writeRows<{ id: string }>(
        owner,
        inserted,
        ...insertEventsIf(this.db, event, { webhook: webhook.id }),
      );
      return rows.some((r) => r.id === webhook.id);
    }

    async getWebhook(id: string): Promise<Webhook | undefined> {
      const row = await this.rowWith('webhooks', { id });
      return row && toWebhook(row);
    }

    async listWebhooks(ownerId?: string | null): Promise<Webhook[]> {
      let query = this.db.selectFrom('webhooks').selectAll();
      if (ownerId === null) query = query.where('owner_id', 'is', null);
      else if (ownerId !== undefined) query = query.where('owner_id', '=', ownerId);
      return (await query.orderBy('created_at').orderBy('id').execute()).map(toWebhook);
    }

    async updateWebhook(id: string, changes: { url: string; events: string }, event?: SecurityEvent): Promise<boolean> {
      const updated = this.db.updateTable('webhooks').set(changes).where('id', '=', id);
      return this.changeOne(event, updated);
    }

    async deleteWebhook(id: string, event?: SecurityEvent): Promise<boolean> {
      const pending = (eb: Where<'webhook_deliveries'>) => eb.and({ webhook_id: id, status: 'pending' });
      const deleted = this.db.deleteFrom('webhooks').where('id', '=', id);
      const undelivered = this.db.deleteFrom('webhook_deliveries').where(pending);
      return this.changeOne(event, deleted, undelivered);
    }

    async rotateWebhookSecret(
      id: string,
      secrets: { secretEnc: string; previousSecretEnc: string; previousUntil: number },
      event?: SecurityEvent,
    ): Promise<boolean> {
      const set = {
        secret_enc: secrets.secretEnc,
        previous_secret_enc: secrets.previousSecretEnc,
        previous_until: secrets.previousUntil,
      };
      const rotated = this.db.updateTable('webhooks').set(set).where('id', '=', id);
      return (await this.write(rotated, ...insertEventsIf(this.db, event, { webhook: id }))) === 1;
    }

    async enqueueDelivery(delivery: Delivery, event?: SecurityEvent): Promise<void> {
      await this.write(this.db.insertInto('webhook_deliveries').values(fromDelivery(delivery)), ...this.events(event));
    }

    async claimDeliveries(now: number, lease: number, limit: number, lane: LaneClaim): Promise<Delivery[]> {
      const due = dueEntries(this.db, 'webhook_deliveries', now).where(
        'id',
        'in',
        deliveriesInTurn(this.db, now, limit, lane),
      );
      const claimed = claimEntries(this.db, 'webhook_deliveries', due, { now, lease, skipLocked: this.skipLocked });
      return (await this.writeRows<WebhookDeliveryRow>(claimed)).map(toDelivery);
    }

    async recordAttempt(attempt: DeliveryAttempt, outcome: OutboxOutcome<'delivered'>): Promise<void> {
      const set = { ...attemptRecorded(attempt, outcome), last_status: attempt.status };
      const once = (c: OnConflictBuilder<Database, 'webhook_attempts'>) => c.doNothing();
      await this.write(
        this.db.updateTable('webhook_deliveries').set(set).where('id', '=', attempt.deliveryId),
        this.db.insertInto('webhook_attempts').values(fromAttempt(attempt)).onConflict(once),
      );
    }

    async getDelivery(id: string): Promise<Delivery | undefined> {
      const row = await this.rowWith('webhook_deliveries', { id });
      return row && toDelivery(row);
    }

    async listDeliveries(webhookId: string, limit: number): Promise<Delivery[]> {
      const rows = await this.db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('webhook_id', '=', webhookId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map(toDelivery);
    }

    async listAttempts(deliveryId: string): Promise<DeliveryAttempt[]> {
      const attempts = this.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId);
      return (await attempts.orderBy('attempt').execute()).map(toAttempt);
    }

    async redeliver(id: string, now: number, event?: SecurityEvent): Promise<boolean> {
      // The attempts logged so far stay; the retry schedule starts again from here.
      const again = this.db
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          status: 'pending' as const,
          next_attempt_at: now,
          locked_until: null,
          finished_at: null,
          retry_base: eb.ref('attempts'),
        }))
        .where('id', '=', id);
      const present = this.db.selectFrom('webhook_deliveries').select('id').where('id', '=', id);
      return (await this.write(again, ...(event ? insertEventsWhen(this.db, event, present) : []))) === 1;
    }

    async deliveryBacklog(): Promise<{ pending: number; oldestCreatedAt: number | null }> {
      const row = await this.db
        .selectFrom('webhook_deliveries')
        .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.min('created_at').as('oldest')])
        .where('status', '=', 'pending')
        .executeTakeFirstOrThrow();
      return { pending: Number(row.n), oldestCreatedAt: row.oldest === null ? null : Number(row.oldest) };
    }
  }
  return Webhooks;
}
