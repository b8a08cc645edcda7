// The operator's operations on webhooks beyond making one (src/webhooks/subscriptions.ts): find,
// change and delete one, and show its deliveries. `tessera webhooks …` and the admin API call them
// alike; each change records its event with the requester's actor.
import { CLI, type Requester, securityEvent } from '../events/index.ts';
import type { Delivery, DeliveryAttempt, Webhook, WebhookStore } from '../store/webhooks.ts';
import { checkEventTypes, eventTypesShown, WebhookInputError, webhookUrlProblem } from '../webhooks/subscriptions.ts';
import { NotFoundError } from './errors.ts';
import { describeSchedule } from './schedule.ts';

interface Options {
  now: number;
  requester?: Requester | undefined;
}

export async function findWebhook(store: Pick<WebhookStore, 'getWebhook'>, id: string): Promise<Webhook> {
  const webhook = await store.getWebhook(id);
  if (!webhook) throw new NotFoundError(`no webhook ${id}`);
  return webhook;
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
