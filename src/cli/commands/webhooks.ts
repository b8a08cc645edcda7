// `tessera webhooks …`: the operator's webhook subscriptions (every event they subscribe to), their
// secrets, a test delivery, and the delivery log with redelivery.
import type { Config } from '../../config/index.ts';
import { resolveSecret } from '../../config/secret.ts';
import { CLI } from '../../events/index.ts';
import { createWebhook, DEFAULT_SECRET_GRACE, describeWebhook } from '../../webhooks/subscriptions.ts';
import { ALL_EVENTS, eventTypesShown, WebhookInputError } from '../../webhooks/subscriptions.ts';
import type { WebhookStore } from '../../store/webhooks.ts';
import { UsageError } from '../operations.ts';
import {
  deleteOne,
  formatTime,
  type Io,
  JSON_OPTION,
  listAll,
  onlyArgument,
  parse,
  printRecord,
  requireOption,
  requirePositional,
  showOne,
  strings,
} from './common.ts';
import { deleteWebhook, describeDelivery, findWebhook, updateWebhook } from '../../admin/webhooks.ts';
import { redeliver, rotateWebhookSecret, testWebhook } from '../../admin/webhooks.ts';
import { unknownEventTypes } from './event-types.ts';

/** A refused --url or --events, said as an option's error; unknown event types by name. */
function usageOf(err: WebhookInputError): UsageError {
  if (err.unknownTypes.length === 0) return new UsageError(`--${err.message}`);
  const named = unknownEventTypes('--events', err.unknownTypes);
  return new UsageError(`${named.message}; or ${ALL_EVENTS}, alone, for every type (those added later too)`);
}

/** What `operation` gives, a refused --url or --events said as the option's error. */
async function checked<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    if (err instanceof WebhookInputError) throw usageOf(err);
    throw err;
  }
}

export async function webhooksCommand(store: WebhookStore, config: Config, args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  const now = Math.floor(Date.now() / 1000);
  const existing = (id: string) => findWebhook(store, id);
  switch (sub) {
    case 'create': {
      const { values } = parse(rest, { ...strings('url', 'events'), ...JSON_OPTION });
      const input = {
        url: requireOption(values.url, '--url'),
        events: requireOption(values.events, '--events').split(','),
        ownerId: null,
        allowPrivate: config.outboundAllowPrivate,
      };
      const secret = await resolveSecret(config);
      const created = await checked(() => createWebhook(store, secret, input, now, CLI));
      const shown = { ...describeWebhook(created.webhook), secret: created.secret };
      printRecord(io, values.json, shown, 12);
      if (!values.json)
        io.out('\nStore the secret now: it is shown only once. Receivers verify each delivery with it.');
      return 0;
    }
    case 'list':
      return listAll(
        io,
        rest,
        () => store.listWebhooks(),
        describeWebhook,
        'no webhooks',
        (w) => {
          return `${w.id}  ${w.url}  ${eventTypesShown(w.events).join(' ')}${w.ownerId ? `  (user ${w.ownerId})` : ''}`;
        },
      );
    case 'show':
      return showOne(io, rest, 'the webhook id', async (id) => describeWebhook(await existing(id)), 12);
    case 'update': {
      const { values, positionals } = parse(rest, { ...strings('url', 'events'), ...JSON_OPTION }, 1);
      const webhook = await existing(requirePositional(positionals, 'the webhook id'));
      const input = { url: values.url, events: values.events?.split(','), allowPrivate: config.outboundAllowPrivate };
      const updated = await checked(() => updateWebhook(store, webhook, input, { now }));
      printRecord(io, values.json, describeWebhook(updated), 12);
      return 0;
    }
    case 'delete':
      return deleteOne(io, rest, 'the webhook id', 'webhook', async (id) => {
        await deleteWebhook(store, await existing(id), { now });
      });
    case 'rotate-secret': {
      const { values, positionals } = parse(rest, { ...strings('grace'), ...JSON_OPTION }, 1);
      const webhook = await existing(requirePositional(positionals, 'the webhook id'));
      const grace = values.grace === undefined ? DEFAULT_SECRET_GRACE : Number(values.grace);
      if (!Number.isInteger(grace) || grace < 0) throw new UsageError('--grace must be a whole number of seconds');
      const rotated = await rotateWebhookSecret(store, await resolveSecret(config), webhook, grace, { now });
      const until = formatTime(rotated.previousUntil);
      if (values.json)
        io.out(JSON.stringify({ id: webhook.id, secret: rotated.secret, previous_secret_until: until }, null, 2));
      else
        io.out(
          `secret ${rotated.secret}\n\nDeliveries are signed with the new secret and, until ${until}, the old ` +
            'one too. Store the new one now: it is shown only once.',
        );
      return 0;
    }
    case 'test': {
      const webhook = await existing(onlyArgument(rest, 'the webhook id'));
      const delivery = await testWebhook(store, webhook, { now });
      io.out(`queued a webhook.test delivery ${delivery.id}; see it with: tessera webhooks deliveries ${webhook.id}`);
      return 0;
    }
    case 'deliveries': {
      const { values, positionals } = parse(rest, { ...strings('limit'), ...JSON_OPTION }, 1);
      const webhook = await existing(requirePositional(positionals, 'the webhook id'));
      const limit = values.limit === undefined ? 50 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be 1 to 1000');
      const deliveries = await store.listDeliveries(webhook.id, limit);
      if (values.json) {
        const described = [];
        for (const d of deliveries) described.push(describeDelivery(d, await store.listAttempts(d.id)));
        io.out(JSON.stringify(described, null, 2));
      } else if (deliveries.length === 0) io.out('no deliveries');
      else
        for (const d of deliveries) {
          const last = d.lastStatus ?? d.lastError ?? '-';
          io.out(
            `${d.id}  ${d.eventType}  ${d.status}  attempts ${d.attempts}  last ${last}  ${formatTime(d.createdAt)}`,
          );
        }
      return 0;
    }
    case 'redeliver': {
      const id = onlyArgument(rest, 'the delivery id');
      await redeliver(store, id, { now });
      io.out(`delivery ${id} is due again now`);
      return 0;
    }
    default:
      throw new UsageError(
        sub
          ? `unknown webhooks command "${sub}"`
          : 'webhooks needs a command: create, list, show, update, delete, rotate-secret, test, deliveries, redeliver',
      );
  }
}
