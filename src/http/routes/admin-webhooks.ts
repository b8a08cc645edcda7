// The admin console's webhooks (src/ui/admin/webhooks.ts): every subscription, one's delivery log,
// and a delivery made due again, as `tessera webhooks list|deliveries|redeliver` do. Subscriptions
// are made and changed with `tessera webhooks` (the operator's) or the webhooks API (a user's).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { deliveriesPage, webhooksPage } from '../../ui/admin/webhooks.ts';
import { consoleAdmin, consoleForm } from '../admin-console.ts';
import type { RouteContext } from '../context.ts';
import { formValue, queryValue } from '../forms.ts';
import { sendPage } from '../pages.ts';

/** How many deliveries the log shows, newest first. */
const DELIVERIES = 50;

export function adminWebhookRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;

  app.get('/admin/webhooks', { config: { html: true } }, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const webhooks = await ctx.store.listWebhooks();
    const owners = new Map<string, string>();
    for (const ownerId of new Set(webhooks.map((w) => w.ownerId))) {
      const owner = ownerId === null ? undefined : await ctx.store.getUserById(ownerId);
      if (owner) owners.set(owner.id, owner.username);
    }
    const input = { admin: current.admin.username, webhooks, owners };
    return sendPage(reply.header('cache-control', 'no-store'), (ui) => webhooksPage(ui, input));
  });

  app.get('/admin/webhooks/:id', { config: { html: true } }, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const webhook = await ctx.store.getWebhook(idOf(request));
    if (!webhook) return reply.callNotFound();
    const input = {
      admin: current.admin.username,
      csrfToken: ctx.browser.csrfToken(request, reply),
      webhook,
      deliveries: await ctx.store.listDeliveries(webhook.id, DELIVERIES),
      redelivered: queryValue(request, 'redelivered') === '1',
    };
    return sendPage(reply.header('cache-control', 'no-store'), (ui) => deliveriesPage(ui, input));
  });

  app.post('/admin/webhooks/:id/redeliver', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const webhook = await ctx.store.getWebhook(idOf(request));
    const delivery = await ctx.store.getDelivery(formValue(request, 'delivery') ?? '');
    if (!webhook || delivery?.webhookId !== webhook.id || !(await ctx.store.redeliver(delivery.id, current.now)))
      return reply.callNotFound();
    request.log.info({ event: 'admin_action', action: 'redelivered', delivery: delivery.id }, 'admin action');
    return reply.redirect(`/admin/webhooks/${encodeURIComponent(webhook.id)}?redelivered=1`, 303);
  });
}
