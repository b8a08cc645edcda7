// /admin/api/v1/clients: register, read, change and delete clients and rotate their secrets, through
// the operations `tessera clients` calls (src/admin/clients.ts). A secret is shown once, when made.
import type { FastifyInstance } from 'fastify';
import { describeClient } from '../../admin/client-view.ts';
import { createClient, deleteClient, rotateClientSecret, updateClient } from '../../admin/clients.ts';
import { NotFoundError } from '../../admin/errors.ts';
import { sealJwtSecret } from '../../oauth/client-auth/assertion.ts';
import type { Client } from '../../store/clients.ts';
import {
  CLIENT_PATCH,
  type ClientSettings,
  createInput,
  NEW_CLIENT,
  type NewClient,
  updateInput,
} from './client-input.ts';
import { checkIfMatch, etagOf } from './etag.ts';
import type { AdminApi } from './context.ts';
import { ETAG_HEADER, IF_MATCH, problems } from './schemas.ts';

type ById = { Params: { client_id: string } };

const params = { type: 'object', required: ['client_id'], properties: { client_id: { type: 'string' } } } as const;
const json = (schema: object) => ({ 'application/json': { schema } });
/** A client, and its new secret and the warnings about its settings where there are some. */
const WITH_SECRET = {
  type: 'object',
  required: ['client', 'warnings'],
  additionalProperties: false,
  properties: {
    client: { $ref: 'Client#' },
    client_secret: { type: 'string', description: 'shown this once' },
    warnings: { type: 'array', items: { type: 'string' } },
  },
} as const;

export function clientRoutes(app: FastifyInstance, api: AdminApi): void {
  const tags = ['clients'];
  const find = async (clientId: string): Promise<Client> => {
    const client = await api.store.getClient(clientId, { suspended: true });
    if (!client) throw new NotFoundError(`no client ${clientId}`);
    return client;
  };
  const show = (client: Client) => describeClient(client, api.config);

  app.get(
    '/clients',
    {
      schema: {
        tags,
        summary: 'Every client, registered by the operator or by itself',
        response: {
          200: {
            type: 'object',
            required: ['items'],
            additionalProperties: false,
            properties: { items: { type: 'array', items: { $ref: 'Client#' } } },
          },
          ...problems(),
        },
      },
    },
    async () => ({ items: (await api.store.listClients()).map(show) }),
  );

  app.post<{ Body: NewClient }>(
    '/clients',
    {
      schema: {
        tags,
        summary: 'Register a client; its secret, if it has one, is shown this once',
        body: NEW_CLIENT,
        response: { 201: { description: 'registered', content: json(WITH_SECRET) }, ...problems(400, 415) },
      },
    },
    async (request, reply) => {
      const input = createInput(request.body, api.config, api.secret);
      const made = await createClient(api.store, api.config, input, api.now(), api.requester(request));
      const secret = made.clientSecret === null ? {} : { client_secret: made.clientSecret };
      return reply
        .code(201)
        .header('location', `${request.url}/${made.client.clientId}`)
        .send({ client: show(made.client), ...secret, warnings: made.warnings });
    },
  );

  app.get<ById>(
    '/clients/:client_id',
    {
      schema: {
        tags,
        summary: 'A client (never its secret)',
        params,
        response: {
          200: { description: 'the client', headers: ETAG_HEADER, content: json({ $ref: 'Client#' }) },
          ...problems(404),
        },
      },
    },
    async (request, reply) => {
      const shown = show(await find(request.params.client_id));
      return reply.header('etag', etagOf(shown)).send(shown);
    },
  );

  app.patch<ById & { Body: ClientSettings }>(
    '/clients/:client_id',
    {
      schema: {
        tags,
        summary: 'Change a client (a JSON merge patch); a new secret only when it comes to need one',
        params,
        headers: IF_MATCH,
        body: { content: { 'application/merge-patch+json': { schema: CLIENT_PATCH }, ...json(CLIENT_PATCH) } },
        response: { 200: { description: 'changed', content: json(WITH_SECRET) }, ...problems(400, 404, 412, 415) },
      },
    },
    async (request, reply) => {
      const current = await find(request.params.client_id);
      checkIfMatch(request, show(current));
      const input = updateInput(request.body, api.config, api.secret, current);
      const { clientId } = current;
      const done = await updateClient(api.store, clientId, input, api.now(), api.requester(request), api.config);
      const secret = done.clientSecret === null ? {} : { client_secret: done.clientSecret };
      const shown = show(done.client);
      return reply.header('etag', etagOf(shown)).send({ client: shown, ...secret, warnings: done.warnings });
    },
  );

  app.delete<ById>(
    '/clients/:client_id',
    {
      schema: {
        tags,
        summary: 'Delete a client: its grants and tokens end',
        params,
        headers: IF_MATCH,
        response: { 204: { description: 'deleted', type: 'null' }, ...problems(404, 412) },
      },
    },
    async (request, reply) => {
      const current = await find(request.params.client_id);
      checkIfMatch(request, show(current));
      await deleteClient(api.store, current.clientId, api.options(request));
      return reply.code(204).send();
    },
  );

  app.post<ById & { Body: { grace: number } | undefined }>(
    '/clients/:client_id/rotate-secret',
    {
      schema: {
        tags,
        summary: 'A new secret, shown this once; the old one keeps working for `grace` seconds',
        params,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: { grace: { type: 'integer', minimum: 0, maximum: 2_592_000, default: 0 } },
        },
        response: {
          200: {
            type: 'object',
            required: ['client_id', 'client_secret', 'previous_secret_expires_at'],
            additionalProperties: false,
            properties: {
              client_id: { type: 'string' },
              client_secret: { type: 'string' },
              previous_secret_expires_at: { type: ['string', 'null'] },
            },
          },
          ...problems(400, 404, 415),
        },
      },
    },
    async (request) => {
      const { clientId, tokenEndpointAuthMethod } = await find(request.params.client_id);
      // A client_secret_jwt client's old secret stops at once (src/admin/clients.ts).
      const grace = tokenEndpointAuthMethod === 'client_secret_jwt' ? 0 : (request.body?.grace ?? 0);
      const now = api.now();
      const seal = (secret: string) => sealJwtSecret(secret, api.secret);
      const secret = await rotateClientSecret(api.store, clientId, now, api.requester(request), grace, seal);
      const until = grace > 0 ? new Date((now + grace) * 1000).toISOString() : null;
      return { client_id: clientId, client_secret: secret, previous_secret_expires_at: until };
    },
  );
}
