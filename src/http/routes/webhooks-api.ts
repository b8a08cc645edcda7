// /api/webhooks: a user's own webhook subscriptions, managed with a Tessera access token carrying
// the `webhooks` scope (the default audience, a user's token), at most TESSERA_WEBHOOKS_PER_USER of
// them. What a user's webhook receives is the rule of src/events/webhooks/audience.ts: the events about
// that user, and of the events about the apps they registered (RFC 7591) what follows a consent.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidRequest, OAuthError } from '../../errors/index.ts';
import { securityEvent } from '../../events/index.ts';
import { createWebhook, describeWebhook, WebhookInputError } from '../../webhooks/subscriptions.ts';
import { userWithScope } from '../../oauth/token-status.ts';
import type { RouteContext } from '../context.ts';
import { requesterOf } from '../requester.ts';
import type { Secrets } from '../../tokens/secrets.ts';

export function webhooksApiRoutes(app: FastifyInstance, ctx: RouteContext, secret: Secrets): void {
  const deps = { config: ctx.config, store: ctx.store, keys: ctx.keys, refreshTokens: ctx.refreshTokens };

  /** The user whose token this is, if it carries `webhooks`. */
  const owner = async (request: FastifyRequest) =>
    (await userWithScope(deps, request.headers.authorization, 'webhooks', ctx.now())).id;

  const noStore = { 'cache-control': 'no-store' };
  app.get('/api/webhooks', { config: { bearer: true } }, async (request, reply) => {
    const userId = await owner(request);
    return reply.headers(noStore).send({ webhooks: (await ctx.store.listWebhooks(userId)).map(describeWebhook) });
  });

  app.post('/api/webhooks', { config: { bearer: true } }, async (request, reply) => {
    const userId = await owner(request);
    const body = request.body as { url?: unknown; events?: unknown } | null;
    if (
      typeof body?.url !== 'string' ||
      !Array.isArray(body.events) ||
      !body.events.every((e) => typeof e === 'string')
    ) {
      throw new InvalidRequest('the body must be JSON: {"url": "https://…", "events": ["user.signed_in", …]}');
    }
    try {
      const input = {
        url: body.url,
        events: body.events as string[],
        ownerId: userId,
        allowPrivate: ctx.config.outboundAllowPrivate,
        perOwner: ctx.config.webhooksPerUser,
      };
      const created = await createWebhook(ctx.store, secret, input, ctx.now(), requesterOf(request));
      return reply
        .code(201)
        .headers(noStore)
        .send({ ...describeWebhook(created.webhook), secret: created.secret });
    } catch (err) {
      if (err instanceof WebhookInputError) throw new InvalidRequest(err.message);
      throw err;
    }
  });

  app.delete<{ Params: { id: string } }>('/api/webhooks/:id', { config: { bearer: true } }, async (request, reply) => {
    const userId = await owner(request);
    const webhook = await ctx.store.getWebhook(request.params.id);
    // Someone else's webhook is as absent as one that does not exist.
    if (!webhook || webhook.ownerId !== userId) throw new OAuthError('invalid_request', 'no such webhook', 404);
    const data = { webhook: webhook.id, url: webhook.url };
    const deleted = securityEvent('webhook.deleted', ctx.now(), { userId, requester: requesterOf(request), data });
    await ctx.store.deleteWebhook(webhook.id, deleted);
    return reply.code(204).send();
  });
}
