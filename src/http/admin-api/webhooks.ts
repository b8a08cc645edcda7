// /admin/api/v1/webhooks: the webhook subscriptions (the operator's, and users' own), made, changed,
// deleted, their secrets rotated and test deliveries sent through the operations `tessera webhooks`
// calls, and each one's delivery log, a delivery made due again.
import type { FastifyInstance } from 'fastify';
import { deleteWebhook, describeDelivery, findWebhook, updateWebhook } from '../../admin/webhooks.ts';
import { redeliver, rotateWebhookSecret, testWebhook } from '../../admin/webhooks.ts';
import { createWebhook, DEFAULT_SECRET_GRACE, describeWebhook } from '../../webhooks/subscriptions.ts';
import type { Webhook } from '../../store/webhooks.ts';
import type { AdminApi } from './context.ts';
import { deleteRoute, objectKind, patchRoute, readRoute } from './object-routes.ts';
import { jsonContent, listOf, objectOf, paramsOf, problems } from './schemas.ts';

type ById = { Params: { id: string } };

const strings = { type: 'array', items: { type: 'string' } } as const;
const nullable = { type: ['string', 'null'] } as const;

const WEBHOOK = objectOf({
  id: { type: 'string' },
  url: { type: 'string' },
  events: { ...strings, description: 'event types, or ["all"]' },
  owner_id: { type: ['string', 'null'], description: "the user whose webhook it is; null: the operator's" },
  created_at: { type: 'string' },
});
const DELIVERY = objectOf(
  {
    id: { type: 'string' },
    event_type: { type: 'string' },
    status: { type: 'string' },
    attempts: { type: 'integer' },
    created_at: { type: 'string' },
    next_attempt_at: nullable,
    finished_at: nullable,
    last_status: { type: ['integer', 'null'] },
    last_error: nullable,
    log: {
      type: 'array',
      items: objectOf({
        attempt: { type: 'integer' },
        at: { type: 'string' },
        status: { type: ['integer', 'null'] },
        duration_ms: { type: 'number' },
        error: nullable,
      }),
    },
  },
  ['log'],
);
const params = paramsOf('id');
const deliveryParams = {
  type: 'object',
  required: ['id', 'delivery_id'],
  properties: { id: { type: 'string' }, delivery_id: { type: 'string' } },
} as const;
const queued = (description: string) => ({ description, content: jsonContent(DELIVERY) });
const url = { type: 'string', maxLength: 2048 } as const;
const events = { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 100 } as const;
const PATCH = { type: 'object', additionalProperties: false, minProperties: 1, properties: { url, events } };

export function webhookRoutes(app: FastifyInstance, api: AdminApi): void {
  const tags = ['webhooks'];
  const allowPrivate = api.config.outboundAllowPrivate;
  const webhooks = objectKind<Webhook, 'id'>('webhooks', 'id', WEBHOOK, {
    find: (id) => findWebhook(api.store, id),
    show: describeWebhook,
  });

  app.get(
    '/webhooks',
    {
      schema: {
        tags,
        summary: "Every webhook: the operator's and users' own",
        response: { 200: listOf(WEBHOOK), ...problems() },
      },
    },
    async () => ({ items: (await api.store.listWebhooks()).map(describeWebhook) }),
  );

  app.post<{ Body: { url: string; events: string[] } }>(
    '/webhooks',
    {
      schema: {
        tags,
        summary: 'Subscribe a URL to event types (or ["all"]); its signing secret is shown this once',
        body: objectOf({ url, events }),
        response: {
          201: objectOf({ webhook: WEBHOOK, secret: { type: 'string', description: 'shown this once' } }),
          ...problems(400, 415),
        },
      },
    },
    async (request, reply) => {
      const input = { ...request.body, ownerId: null, allowPrivate };
      const { requester, now } = api.options(request);
      const made = await createWebhook(api.store, api.secret, input, now, requester);
      return reply
        .code(201)
        .header('location', `${request.url}/${made.webhook.id}`)
        .send({ webhook: describeWebhook(made.webhook), secret: made.secret });
    },
  );

  readRoute(app, webhooks, { summary: 'A webhook (never its secret)', description: 'the webhook' });

  patchRoute<Webhook, 'id', { url?: string; events?: string[] }>(app, webhooks, {
    summary: "Change a webhook's URL or event types (a JSON merge patch)",
    body: PATCH,
    problems: [400, 404, 412, 415],
    change: (current, request) =>
      updateWebhook(api.store, current, { ...request.body, allowPrivate }, api.options(request)),
  });

  deleteRoute(app, webhooks, {
    summary: 'Delete a webhook',
    remove: (current, request) => deleteWebhook(api.store, current, api.options(request)),
  });

  app.get<ById & { Querystring: { limit: number } }>(
    '/webhooks/:id/deliveries',
    {
      schema: {
        tags,
        summary: "The webhook's deliveries, newest first, each with the log of its attempts",
        params,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
        },
        response: { 200: listOf(DELIVERY), ...problems(400, 404) },
      },
    },
    async (request) => {
      const webhook = await findWebhook(api.store, request.params.id);
      const deliveries = await api.store.listDeliveries(webhook.id, request.query.limit);
      const items = [];
      for (const d of deliveries) items.push(describeDelivery(d, await api.store.listAttempts(d.id)));
      return { items };
    },
  );

  app.post<ById & { Body: { grace: number } | undefined }>(
    '/webhooks/:id/rotate-secret',
    {
      schema: {
        tags,
        summary: 'A new signing secret, shown this once; the old one signs beside it for `grace` seconds',
        params,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: { grace: { type: 'integer', minimum: 0, maximum: 2_592_000, default: DEFAULT_SECRET_GRACE } },
        },
        response: {
          200: objectOf({
            id: { type: 'string' },
            secret: { type: 'string', description: 'shown this once' },
            previous_secret_until: { type: 'string', description: 'until when the old secret signs too' },
          }),
          ...problems(400, 404, 415),
        },
      },
    },
    async (request) => {
      const webhook = await findWebhook(api.store, request.params.id);
      const grace = request.body?.grace ?? DEFAULT_SECRET_GRACE;
      const rotated = await rotateWebhookSecret(api.store, api.secret, webhook, grace, api.options(request));
      const until = new Date(rotated.previousUntil * 1000).toISOString();
      return { id: webhook.id, secret: rotated.secret, previous_secret_until: until };
    },
  );

  app.post<ById>(
    '/webhooks/:id/test',
    {
      schema: {
        tags,
        summary: 'Queue a `webhook.test` delivery to this webhook alone',
        params,
        response: { 202: queued('the test delivery, queued'), ...problems(404) },
      },
    },
    async (request, reply) => {
      const webhook = await findWebhook(api.store, request.params.id);
      const delivery = await testWebhook(api.store, webhook, api.options(request));
      return reply.code(202).send(describeDelivery(delivery));
    },
  );

  app.post<{ Params: { id: string; delivery_id: string } }>(
    '/webhooks/:id/deliveries/:delivery_id/redeliver',
    {
      schema: {
        tags,
        summary: 'Make a delivery due again now, with a fresh count of attempts (its log stays)',
        params: deliveryParams,
        response: { 202: queued('the delivery, due again'), ...problems(404) },
      },
    },
    async (request, reply) => {
      const { id, delivery_id: deliveryId } = request.params;
      const delivery = await redeliver(api.store, deliveryId, { ...api.options(request), webhookId: id });
      return reply.code(202).send(describeDelivery(delivery));
    },
  );
}
