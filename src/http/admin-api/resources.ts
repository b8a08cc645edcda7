// /admin/api/v1/resources: the APIs access tokens may be asked for (RFC 8707), through the operations
// `tessera resources` calls (src/admin/resources.ts). A resource is named by its URI, percent-encoded
// in the path (/resources/https%3A%2F%2Fapi.example.com).
import type { FastifyInstance } from 'fastify';
import {
  createResource,
  deleteResource,
  describeResource,
  findResource,
  updateResource,
} from '../../admin/resources.ts';
import type { AdminApi } from './context.ts';
import { checkIfMatch, etagOf } from './etag.ts';
import { ETAG_HEADER, IF_MATCH, problems } from './schemas.ts';

type ByUri = { Params: { uri: string } };

const RESOURCE = {
  type: 'object',
  required: ['uri', 'name', 'scope', 'created_at'],
  additionalProperties: false,
  properties: {
    uri: { type: 'string' },
    name: { type: 'string' },
    scope: { type: 'string', description: 'the API scopes it accepts, space-separated' },
    created_at: { type: 'string' },
  },
} as const;
const params = { type: 'object', required: ['uri'], properties: { uri: { type: 'string' } } } as const;
const name = { type: 'string', maxLength: 256 } as const;
const scope = { type: 'string', maxLength: 2048 } as const;
const one = (description: string) => ({
  description,
  headers: ETAG_HEADER,
  content: { 'application/json': { schema: RESOURCE } },
});

export function resourceRoutes(app: FastifyInstance, api: AdminApi): void {
  const tags = ['resources'];

  app.get(
    '/resources',
    {
      schema: {
        tags,
        summary: 'The APIs registered (RFC 8707)',
        response: {
          200: {
            type: 'object',
            required: ['items'],
            additionalProperties: false,
            properties: { items: { type: 'array', items: RESOURCE } },
          },
          ...problems(),
        },
      },
    },
    async () => ({ items: (await api.store.listResources()).map(describeResource) }),
  );

  app.post<{ Body: { uri: string; scope: string; name?: string } }>(
    '/resources',
    {
      schema: {
        tags,
        summary: 'Register an API: its URI and the API scopes it accepts',
        body: {
          type: 'object',
          required: ['uri', 'scope'],
          additionalProperties: false,
          properties: { uri: { type: 'string', maxLength: 2048 }, scope, name },
        },
        response: { 201: one('registered'), ...problems(400, 409, 415) },
      },
    },
    async (request, reply) => {
      const resource = await createResource(api.store, api.config, request.body, api.options(request));
      const shown = describeResource(resource);
      return reply
        .code(201)
        .header('location', `${request.url}/${encodeURIComponent(resource.uri)}`)
        .header('etag', etagOf(shown))
        .send(shown);
    },
  );

  app.get<ByUri>(
    '/resources/:uri',
    { schema: { tags, summary: 'An API', params, response: { 200: one('the API'), ...problems(404) } } },
    async (request, reply) => {
      const shown = describeResource(await findResource(api.store, request.params.uri));
      return reply.header('etag', etagOf(shown)).send(shown);
    },
  );

  const PATCH = { type: 'object', additionalProperties: false, minProperties: 1, properties: { scope, name } };
  app.patch<ByUri & { Body: { scope?: string; name?: string } }>(
    '/resources/:uri',
    {
      schema: {
        tags,
        summary: "Change an API's name or scopes (a JSON merge patch)",
        params,
        headers: IF_MATCH,
        body: { content: { 'application/merge-patch+json': { schema: PATCH }, 'application/json': { schema: PATCH } } },
        response: { 200: one('changed'), ...problems(400, 404, 412, 415) },
      },
    },
    async (request, reply) => {
      const { uri } = request.params;
      checkIfMatch(request, describeResource(await findResource(api.store, uri)));
      const updated = await updateResource(api.store, api.config, uri, request.body, api.options(request));
      const shown = describeResource(updated);
      return reply.header('etag', etagOf(shown)).send(shown);
    },
  );

  app.delete<ByUri>(
    '/resources/:uri',
    {
      schema: {
        tags,
        summary: 'Remove an API: no more tokens are issued for it',
        params,
        headers: IF_MATCH,
        response: { 204: { description: 'removed', type: 'null' }, ...problems(404, 412) },
      },
    },
    async (request, reply) => {
      const { uri } = request.params;
      checkIfMatch(request, describeResource(await findResource(api.store, uri)));
      await deleteResource(api.store, uri, api.options(request));
      return reply.code(204).send();
    },
  );
}
