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
import { etagOf } from './etag.ts';
import type { AdminApi } from './context.ts';
import { deleteRoute, findUnchanged, objectKind, readRoute } from './object-routes.ts';
import { IF_MATCH, jsonContent, listOf, mergePatch, paramsOf, problems } from './schemas.ts';

type ById = { Params: { client_id: string } };

const params = paramsOf('client_id');
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
  const clients = objectKind<Client, 'client_id'>('clients', 'client_id', { $ref: 'Client#' }, { find, show });

  app.get(
    '/clients',
    {
      schema: {
        tags,
        summary: 'Every client, registered by the operator or by itself',
        response: { 200: listOf({ $ref: 'Client#' }), ...problems() },
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
        response: { 201: { description: 'registered', content: jsonContent(WITH_SECRET) }, ...problems(400, 415) },
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

  readRoute(app, clients, { summary: 'A client (never its secret)', description: 'the client' });

  // Written out rather than with patchRoute: the answer is the client with its new secret and warnings.
  app.patch<ById & { Body: ClientSettings }>(
    '/clients/:client_id',
    {
      schema: {
        tags,
        summary: 'Change a client (a JSON merge patch); a new secret only when it comes to need one',
        params,
        headers: IF_MATCH,
        body: mergePatch(CLIENT_PATCH),
        response: {
          200: { description: 'changed', content: jsonContent(WITH_SECRET) },
          ...problems(400, 404, 412, 415),
        },
      },
    },
    async (request, reply) => {
      const current = await findUnchanged(clients, request);
      const input = updateInput(request.body, api.config, api.secret, current);
      const { clientId } = current;
      const done = await updateClient(api.store, clientId, input, api.now(), api.requester(request), api.config);
      const secret = done.clientSecret === null ? {} : { client_secret: done.clientSecret };
      const shown = show(done.client);
      return reply.header('etag', etagOf(shown)).send({ client: shown, ...secret, warnings: done.warnings });
    },
  );

  deleteRoute(app, clients, {
    summary: 'Delete a client: its grants and tokens end',
    remove: (current, request) => deleteClient(api.store, current.clientId, api.options(request)),
  });

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
      const { clientId } = await find(request.params.client_id);
      const grace = request.body?.grace ?? 0;
      const seal = (secret: string) => sealJwtSecret(secret, api.secret);
      const requester = api.requester(request);
      // The previous secret's end, when it keeps working (never a client_secret_jwt client's).
      const rotated = await rotateClientSecret(api.store, clientId, api.now(), requester, grace, seal);
      const until = rotated.previousUntil === null ? null : new Date(rotated.previousUntil * 1000).toISOString();
      return { client_id: clientId, client_secret: rotated.secret, previous_secret_expires_at: until };
    },
  );
}
