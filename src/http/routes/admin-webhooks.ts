// The admin console's webhooks (src/ui/admin/webhooks.ts): every subscription, a new one (its signing
// secret shown once), one's URL and event types changed, its deletion, its delivery log, and a
// delivery made due again (`webhook.redelivered`), as `tessera webhooks create|update|delete|deliveries|
// redeliver` do, through the same operations (src/webhooks/subscriptions.ts, src/admin/webhooks.ts),
// recorded with the admin as its actor.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../../admin/errors.ts';
import { deleteWebhook, redeliver, updateWebhook } from '../../admin/webhooks.ts';
import type { Webhook } from '../../store/webhooks.ts';
import {
  deliveriesPage,
  newWebhookPage,
  type WebhookFields,
  webhookSecretPage,
  webhooksPage,
} from '../../ui/admin/webhooks.ts';
import { createWebhook, WebhookInputError } from '../../webhooks/subscriptions.ts';
import { type ConsoleAdmin, consoleAdmin, consoleForm } from '../admin-console.ts';
import type { RouteContext } from '../context.ts';
import { formValue, queryValue } from '../forms.ts';
import { sendPage } from '../pages.ts';

/** How many deliveries the log shows, newest first. */
const DELIVERIES = 50;

const posted = (request: FastifyRequest): WebhookFields => ({
  url: (formValue(request, 'url') ?? '').trim(),
  events: formValue(request, 'events') ?? '',
});
const eventsOf = (fields: WebhookFields) => fields.events.split(/[\s,]+/).filter(Boolean);

export function adminWebhookRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const html = { config: { html: true } };
  const post = { config: { html: true, sameOrigin: true } };
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  const noStore = { 'cache-control': 'no-store' };
  const allowPrivate = ctx.config.outboundAllowPrivate;
  /** The webhook's page: its form (as posted and refused, with a 400, when `refused` says why) and its log. */
  const webhookPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    current: ConsoleAdmin,
    webhook: Webhook,
    refused?: { fields: WebhookFields; problem: string },
  ) => {
    const input = {
      admin: current.admin.username,
      csrfToken: ctx.browser.csrfToken(request, reply),
      webhook,
      deliveries: await ctx.store.listDeliveries(webhook.id, DELIVERIES),
      redelivered: queryValue(request, 'redelivered') === '1',
      saved: queryValue(request, 'saved') === '1',
      ...refused,
    };
    return sendPage(reply.code(refused ? 400 : 200).headers(noStore), (ui) => deliveriesPage(ui, input));
  };

  app.get('/admin/webhooks', html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const webhooks = await ctx.store.listWebhooks();
    const owners = new Map<string, string>();
    for (const ownerId of new Set(webhooks.map((w) => w.ownerId))) {
      const owner = ownerId === null ? undefined : await ctx.store.getUserById(ownerId);
      if (owner) owners.set(owner.id, owner.username);
    }
    const input = { admin: current.admin.username, webhooks, owners, deleted: queryValue(request, 'deleted') };
    return sendPage(reply.headers(noStore), (ui) => webhooksPage(ui, input));
  });

  app.get('/admin/webhooks/new', html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const fields = { url: '', events: 'all' };
    const input = { admin: current.admin.username, csrfToken: ctx.browser.csrfToken(request, reply), fields };
    return sendPage(reply.headers(noStore), (ui) => newWebhookPage(ui, input));
  });

  app.post('/admin/webhooks/new', post, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const fields = posted(request);
    const input = { url: fields.url, events: eventsOf(fields), ownerId: null, allowPrivate };
    try {
      const made = await createWebhook(ctx.store, ctx.mail.secret, input, current.now, current.requester);
      const shown = { admin: current.admin.username, webhook: made.webhook, secret: made.secret };
      return sendPage(reply.headers(noStore), (ui) => webhookSecretPage(ui, shown));
    } catch (err) {
      if (!(err instanceof WebhookInputError)) throw err;
      const page = { admin: current.admin.username, csrfToken: ctx.browser.csrfToken(request, reply), fields };
      const refused = { ...page, problem: err.message };
      return sendPage(reply.code(400).headers(noStore), (ui) => newWebhookPage(ui, refused));
    }
  });

  app.get('/admin/webhooks/:id', html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const webhook = await ctx.store.getWebhook(idOf(request));
    if (!webhook) return reply.callNotFound();
    return webhookPage(request, reply, current, webhook);
  });

  app.post('/admin/webhooks/:id', post, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const webhook = await ctx.store.getWebhook(idOf(request));
    if (!webhook) return reply.callNotFound();
    const fields = posted(request);
    try {
      const input = { url: fields.url, events: eventsOf(fields), allowPrivate };
      await updateWebhook(ctx.store, webhook, input, { now: current.now, requester: current.requester });
    } catch (err) {
      if (!(err instanceof WebhookInputError)) throw err;
      return webhookPage(request, reply, current, webhook, { fields, problem: err.message });
    }
    return reply.redirect(`/admin/webhooks/${encodeURIComponent(webhook.id)}?saved=1`, 303);
  });

  app.post('/admin/webhooks/:id/delete', post, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const webhook = await ctx.store.getWebhook(idOf(request));
    if (!webhook) return reply.callNotFound();
    await deleteWebhook(ctx.store, webhook, { now: current.now, requester: current.requester });
    return reply.redirect(`/admin/webhooks?${new URLSearchParams({ deleted: webhook.url })}`, 303);
  });

  app.post('/admin/webhooks/:id/redeliver', post, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const webhookId = idOf(request);
    try {
      const options = { now: current.now, requester: current.requester, webhookId };
      await redeliver(ctx.store, formValue(request, 'delivery') ?? '', options);
    } catch (err) {
      if (err instanceof NotFoundError) return reply.callNotFound();
      throw err;
    }
    return reply.redirect(`/admin/webhooks/${encodeURIComponent(webhookId)}?redelivered=1`, 303);
  });
}
