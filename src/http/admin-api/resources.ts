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
import type { Resource } from '../../store/resources.ts';
import type { AdminApi } from './context.ts';
import { etagOf } from './etag.ts';
import { deleteRoute, objectKind, patchRoute, readRoute } from './object-routes.ts';
import { listOf, objectAnswer, objectOf, problems } from './schemas.ts';

const RESOURCE = objectOf({
  uri: { type: 'string' },
  name: { type: 'string' },
  scope: { type: 'string', description: 'the API scopes it accepts, space-separated' },
  created_at: { type: 'string' },
});
const name = { type: 'string', maxLength: 256 } as const;
const scope = { type: 'string', maxLength: 2048 } as const;
const PATCH = { type: 'object', additionalProperties: false, minProperties: 1, properties: { scope, name } };

export function resourceRoutes(app: FastifyInstance, api: AdminApi): void {
  const tags = ['resources'];
  const resources = objectKind<Resource, 'uri'>('resources', 'uri', RESOURCE, {
    find: (uri) => findResource(api.store, uri),
    show: describeResource,
  });

  app.get(
    '/resources',
    { schema: { tags, summary: 'The APIs registered (RFC 8707)', response: { 200: listOf(RESOURCE), ...problems() } } },
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
        response: { 201: objectAnswer('registered', RESOURCE), ...problems(400, 409, 415) },
      },
    },
    async (request, reply) => {
      const made = await createResource(api.store, api.config, request.body, api.options(request));
      const shown = describeResource(made);
      return reply
        .code(201)
        .header('location', `${request.url}/${encodeURIComponent(made.uri)}`)
        .header('etag', etagOf(shown))
        .send(shown);
    },
  );

  readRoute(app, resources, { summary: 'An API', description: 'the API' });

  patchRoute<Resource, 'uri', { scope?: string; name?: string }>(app, resources, {
    summary: "Change an API's name or scopes (a JSON merge patch)",
    body: PATCH,
    problems: [400, 404, 412, 415],
    change: (_current, request) =>
      updateResource(api.store, api.config, request.params.uri, request.body, api.options(request)),
  });

  deleteRoute(app, resources, {
    summary: 'Remove an API: no more tokens are issued for it',
    description: 'removed',
    remove: (_current, request) => deleteResource(api.store, request.params.uri, api.options(request)),
  });
}
