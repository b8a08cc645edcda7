// The operator's operations on webhooks beyond making one (src/webhooks/subscriptions.ts): find,
// change and delete one, rotate its secret, send it a test delivery, show its deliveries and make one
// due again. `tessera webhooks …`, the admin API and the console call them alike; each change records
// its event with the requester's actor, in the same write.
import { CLI, type Requester, securityEvent } from '../events/index.ts';
import { webhookPayload } from '../events/webhooks/payload.ts';
import { newOutboxEntry } from '../store/outbox.ts';
import type { Delivery, DeliveryAttempt, Webhook, WebhookStore } from '../store/webhooks.ts';
import { newSortableId } from '../tokens/opaque.ts';
import type { Secrets } from '../tokens/secrets.ts';
import { newWebhookSecret } from '../webhooks/signature.ts';
import { checkEventTypes, eventTypesShown, sealWebhookSecret } from '../webhooks/subscriptions.ts';
import { WebhookInputError, webhookUrlProblem } from '../webhooks/subscriptions.ts';
import { found, NotFoundError } from './errors.ts';
import { describeSchedule } from './schedule.ts';

interface Options {
  now: number;
  requester?: Requester | undefined;
}

export async function findWebhook(store: Pick<WebhookStore, 'getWebhook'>, id: string): Promise<Webhook> {
  return found(await store.getWebhook(id), `no webhook ${id}`);
}

/**
 * Changes a webhook's URL or event types (a WebhookInputError for a refused one), with
 * `webhook.updated`: the webhook as it is now.
 */
export async function updateWebhook(
  store: WebhookStore,
  webhook: Webhook,
  input: { url?: string | undefined; events?: readonly string[] | undefined; allowPrivate: boolean },
  options: Options,
): Promise<Webhook> {
  const url = input.url ?? webhook.url;
  const problem = webhookUrlProblem(url, input.allowPrivate);
  if (problem) throw new WebhookInputError(`url ${problem}`);
  const events = input.events === undefined ? webhook.events.split(' ') : checkEventTypes(input.events);
  const { now, requester = CLI } = options;
  const data = { webhook: webhook.id, url, events: eventTypesShown(events.join(' ')) };
  const event = securityEvent('webhook.updated', now, { userId: webhook.ownerId, requester, data });
  await store.updateWebhook(webhook.id, { url, events: events.join(' ') }, event);
  return { ...webhook, url, events: events.join(' ') };
}

/** Deletes a webhook (`webhook.deleted`): its deliveries not yet made are dropped with it. */
export async function deleteWebhook(store: WebhookStore, webhook: Webhook, options: Options): Promise<void> {
  const { now, requester = CLI } = options;
  const data = { webhook: webhook.id, url: webhook.url };
  await store.deleteWebhook(
    webhook.id,
    securityEvent('webhook.deleted', now, { userId: webhook.ownerId, requester, data }),
  );
}

/**
 * A new signing secret, shown once (`webhook.secret_rotated`); the old one signs beside it for `grace`
 * seconds, until `previousUntil`.
 */
export async function rotateWebhookSecret(
  store: WebhookStore,
  secrets: Secrets,
  webhook: Webhook,
  grace: number,
  options: Options,
): Promise<{ secret: string; previousUntil: number }> {
  const { now, requester = CLI } = options;
  const secret = newWebhookSecret();
  const previousUntil = now + grace;
  const data = { webhook: webhook.id, grace };
  const event = securityEvent('webhook.secret_rotated', now, { userId: webhook.ownerId, requester, data });
  const sealed = { secretEnc: sealWebhookSecret(secret, secrets), previousSecretEnc: webhook.secretEnc, previousUntil };
  if (!(await store.rotateWebhookSecret(webhook.id, sealed, event)))
    throw new NotFoundError(`no webhook ${webhook.id}`);
  return { secret, previousUntil };
}

/**
 * Queues a `webhook.test` delivery to this webhook alone, recorded as `webhook.tested` (the test
 * delivery is not an event of the trail, its sending is): the delivery made.
 */
export async function testWebhook(store: WebhookStore, webhook: Webhook, options: Options): Promise<Delivery> {
  const { now, requester = CLI } = options;
  const eventId = `test_${newSortableId()}`;
  const id = `${eventId}.${webhook.id}`;
  const test = { id: eventId, at: now, type: 'webhook.test' as const, userId: null, clientId: null };
  const payload = webhookPayload(
    { ...test, ip: null, userAgent: null, actor: requester.actor ?? null, data: { webhook: webhook.id } },
    false,
  );
  const delivery: Delivery = {
    id,
    webhookId: webhook.id,
    eventId,
    eventType: 'webhook.test',
    payload,
    lastStatus: null,
    ...newOutboxEntry(now),
  };
  const data = { webhook: webhook.id, delivery: id };
  await store.enqueueDelivery(
    delivery,
    securityEvent('webhook.tested', now, { userId: webhook.ownerId, requester, data }),
  );
  return delivery;
}

/**
 * Makes a delivery due again now with a fresh count of attempts (`webhook.redelivered`); with
 * `webhookId`, only one of that webhook's. The delivery as it now is.
 */
export async function redeliver(
  store: WebhookStore,
  deliveryId: string,
  options: Options & { webhookId?: string | undefined },
): Promise<Delivery> {
  const { now, requester = CLI, webhookId } = options;
  const delivery = await store.getDelivery(deliveryId);
  if (!delivery || (webhookId !== undefined && delivery.webhookId !== webhookId))
    throw new NotFoundError(`no delivery ${deliveryId}`);
  const webhook = await findWebhook(store, delivery.webhookId);
  const data = { webhook: webhook.id, delivery: delivery.id, event_type: delivery.eventType };
  const event = securityEvent('webhook.redelivered', now, { userId: webhook.ownerId, requester, data });
  if (!(await store.redeliver(delivery.id, now, event))) throw new NotFoundError(`no delivery ${deliveryId}`);
  return (await store.getDelivery(delivery.id)) ?? delivery;
}

/** A delivery, and with `attempts` the log of its attempts. */
export function describeDelivery(delivery: Delivery, attempts?: DeliveryAttempt[]) {
  return {
    id: delivery.id,
    event_type: delivery.eventType,
    ...describeSchedule(delivery),
    last_status: delivery.lastStatus,
    last_error: delivery.lastError,
    ...(attempts
      ? {
          log: attempts.map((a) => ({
            attempt: a.attempt,
            at: new Date(a.at * 1000).toISOString(),
            status: a.status,
            duration_ms: a.durationMs,
            error: a.error,
          })),
        }
      : {}),
  };
}
