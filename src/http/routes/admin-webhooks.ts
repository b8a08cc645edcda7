// The admin console's webhooks (src/ui/admin/webhooks.ts): every subscription, a new one (its signing
// secret shown once), one's URL and event types changed, its deletion, its delivery log, and a
// delivery made due again (`webhook.redelivered`), a test delivery (`webhook.tested`) and its signing
// secret rotated (the new one shown once, the previous one signing too for the grace chosen:
// `webhook.secret_rotated`), as `tessera webhooks create|update|delete|deliveries|redeliver|test|
// rotate-secret` do, through the same operations (src/webhooks/subscriptions.ts, src/admin/webhooks.ts),
// recorded with the admin as its actor. The list, new, edit and delete routes are those every section
// has (./admin-section.ts); deleting a webhook does not ask for a recent sign-in.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError } from '../../admin/errors.ts';
import { deleteWebhook, redeliver, rotateWebhookSecret, testWebhook, updateWebhook } from '../../admin/webhooks.ts';
import type { Webhook } from '../../store/webhooks.ts';
import {
  deliveriesPage,
  newWebhookPage,
  type WebhookFields,
  webhookSecretPage,
  webhooksPage,
} from '../../ui/admin/webhooks.ts';
import { createWebhook, WebhookInputError } from '../../webhooks/subscriptions.ts';
import { consoleForm } from '../admin-console.ts';
import type { RouteContext } from '../context.ts';
import { formValue, queryValue } from '../forms.ts';
import { sendPage } from '../pages.ts';
import { NO_STORE, objectSectionRoutes, postedGrace } from './admin-section.ts';

/** How many deliveries the log shows, newest first. */
const DELIVERIES = 50;

const posted = (request: FastifyRequest): WebhookFields => ({
  url: (formValue(request, 'url') ?? '').trim(),
  events: formValue(request, 'events') ?? '',
});
const eventsOf = (fields: WebhookFields) => fields.events.split(/[\s,]+/).filter(Boolean);

export function adminWebhookRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const allowPrivate = ctx.config.outboundAllowPrivate;
  const pathOf = (webhook: Webhook) => `/admin/webhooks/${encodeURIComponent(webhook.id)}`;

  objectSectionRoutes<Webhook, WebhookFields>(app, ctx, {
    path: '/admin/webhooks',
    list: () => ctx.store.listWebhooks(),
    // The usernames of the users who own some.
    listPage: async (listing) => {
      const owners = new Map<string, string>();
      for (const ownerId of new Set(listing.items.map((w) => w.ownerId))) {
        const owner = ownerId === null ? undefined : await ctx.store.getUserById(ownerId);
        if (owner) owners.set(owner.id, owner.username);
      }
      return (ui) => webhooksPage(ui, { ...listing, owners });
    },
    find: (id) => ctx.store.getWebhook(id),
    pathOf,
    blank: { url: '', events: 'all' },
    fieldsOf: (webhook) => ({ url: webhook.url, events: webhook.events }),
    posted,
    // A webhook's page is its form above its delivery log.
    formPage: async ({ item: webhook, saved: _saved, ...input }, request) => {
      if (!webhook) return (ui) => newWebhookPage(ui, input);
      const page = {
        ...input,
        webhook,
        deliveries: await ctx.store.listDeliveries(webhook.id, DELIVERIES),
        redelivered: queryValue(request, 'redelivered') === '1',
        tested: queryValue(request, 'tested') === '1',
        saved: queryValue(request, 'saved') === '1',
      };
      return (ui) => deliveriesPage(ui, page);
    },
    refuses: (err): err is Error => err instanceof WebhookInputError,
    create: async (fields, _request, current) => {
      const input = { url: fields.url, events: eventsOf(fields), ownerId: null, allowPrivate };
      const made = await createWebhook(ctx.store, ctx.mail.secret, input, current.now, current.requester);
      const shown = { admin: current.admin.username, webhook: made.webhook, secret: made.secret, previousUntil: null };
      return { page: (ui) => webhookSecretPage(ui, shown) };
    },
    update: async (webhook, fields, _request, current) => {
      const input = { url: fields.url, events: eventsOf(fields), allowPrivate };
      await updateWebhook(ctx.store, webhook, input, { now: current.now, requester: current.requester });
    },
    remove: async (webhook, current) => {
      await deleteWebhook(ctx.store, webhook, { now: current.now, requester: current.requester });
      return webhook.url;
    },
    deleteAsksRecentSignIn: false,
  });

  app.post('/admin/webhooks/:id/redeliver', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const webhookId = (request.params as { id: string }).id;
    try {
      const options = { now: current.now, requester: current.requester, webhookId };
      await redeliver(ctx.store, formValue(request, 'delivery') ?? '', options);
    } catch (err) {
      if (err instanceof NotFoundError) return reply.callNotFound();
      throw err;
    }
    return reply.redirect(`/admin/webhooks/${encodeURIComponent(webhookId)}?redelivered=1`, 303);
  });

  /** The webhook a form at one of its paths is about, or a 404. */
  const webhookOf = async (request: FastifyRequest) => ctx.store.getWebhook((request.params as { id: string }).id);

  app.post('/admin/webhooks/:id/test', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const webhook = await webhookOf(request);
    if (!webhook) return reply.callNotFound();
    await testWebhook(ctx.store, webhook, { now: current.now, requester: current.requester });
    return reply.redirect(`${pathOf(webhook)}?tested=1`, 303);
  });

  app.post(
    '/admin/webhooks/:id/rotate-secret',
    { config: { html: true, sameOrigin: true } },
    async (request, reply) => {
      const current = await consoleForm(ctx, request, reply);
      if ('sent' in current) return current.sent;
      const webhook = await webhookOf(request);
      if (!webhook) return reply.callNotFound();
      const grace = postedGrace(request);
      const options = { now: current.now, requester: current.requester };
      const { secret, previousUntil } = await rotateWebhookSecret(ctx.store, ctx.mail.secret, webhook, grace, options);
      const until = grace > 0 ? previousUntil : null;
      const shown = { admin: current.admin.username, webhook, secret, previousUntil: until, rotated: true };
      return sendPage(reply.headers(NO_STORE), (ui) => webhookSecretPage(ui, shown));
    },
  );
}
