// The admin API, /admin/api/v1 (docs/admin-api.md): JSON over HTTP for what `tessera users|clients|
// events|keys` do, for the bearer of an access token with the `admin` scope (./auth.ts). Served on
// the operations listener beside /metrics (src/http/operations.ts), or on the public one with
// TESSERA_ADMIN_API=public (src/app.ts). An encapsulated plugin: its error handler (problem details),
// validator, media types and auth hook touch no other route, and the token, authorize and userinfo
// paths run none of it. The OpenAPI document is generated from the routes' own schemas.
import swagger from '@fastify/swagger';
import { Ajv } from 'ajv';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { VERSION } from '../../release.ts';
import { RefreshTokens } from '../../tokens/refresh.ts';
import { adminRequester } from './auth.ts';
import { ADMIN_API_PREFIX, type AdminApi, type AdminApiDeps } from './context.ts';
import { Problem, PROBLEM_SCHEMA, problemHandler, sendProblem } from './problems.ts';
import { SHARED_SCHEMAS } from './schemas.ts';
import { clientRoutes } from './clients.ts';
import { EVENT_SCHEMA, eventAndKeyRoutes } from './events.ts';
import { invitationRoutes } from './invitations.ts';
import { providerRoutes } from './providers.ts';
import { resourceRoutes } from './resources.ts';
import { userSupportRoutes } from './user-support.ts';
import { webhookRoutes } from './webhooks.ts';
import { userRoutes } from './users.ts';

const OPENAPI_PATH = '/openapi.json';

/** Registers the admin API on `app` under ADMIN_API_PREFIX. */
export async function registerAdminApi(app: FastifyInstance, deps: AdminApiDeps): Promise<void> {
  await app.register(async (api) => adminApi(api, deps), { prefix: ADMIN_API_PREFIX });
}

async function adminApi(app: FastifyInstance, deps: AdminApiDeps): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tessera admin API',
        version: VERSION,
        description: 'Users, clients, events and signing keys of a Tessera server (docs/admin-api.md).',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
      security: [{ bearer: [] }],
    },
    // Shared schemas keep their names in components.schemas (User, Client, Problem, …).
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (json.$id as string | undefined) ?? `def-${i}` },
  });
  for (const schema of [PROBLEM_SCHEMA, EVENT_SCHEMA, ...SHARED_SCHEMAS]) app.addSchema(schema);

  // Request bodies are checked as written: no property dropped, no type coerced; query strings and
  // paths are text, coerced to the schema's numbers.
  const body = new Ajv({ removeAdditional: false, useDefaults: true, coerceTypes: false, strict: false });
  const text = new Ajv({ removeAdditional: false, useDefaults: true, coerceTypes: true, strict: false });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : text).compile(schema));
  // JSON only (RFC 7396: a merge patch is JSON too); any other body is 415, forms included.
  app.removeAllContentTypeParsers();
  const json = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'string' }, json);
  app.setErrorHandler(problemHandler);
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, new Problem(404, 'not-found', `no route for ${request.method} ${request.url.split('?')[0]}`)),
  );

  const tokenDeps = { ...deps, refreshTokens: new RefreshTokens(deps.secret) };
  app.decorateRequest('adminRequester', null);
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.url === `${ADMIN_API_PREFIX}${OPENAPI_PATH}`) return;
    request.adminRequester = await adminRequester(tokenDeps, request, deps.now());
  });
  // An action with nothing to say (POST …/unlock, …/rotate-secret) may come without a body: an empty object.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.method === 'POST') request.body = {};
  });
  app.addHook('onSend', async (_request, reply) => {
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  });

  const requester = (request: FastifyRequest) => {
    if (!request.adminRequester) throw new TypeError('an admin API route without its auth hook');
    return request.adminRequester;
  };
  const api: AdminApi = {
    ...deps,
    requester,
    options: (request) => ({ now: deps.now(), requester: requester(request) }),
  };
  userRoutes(app, api);
  userSupportRoutes(app, api);
  invitationRoutes(app, api);
  clientRoutes(app, api);
  eventAndKeyRoutes(app, api);
  resourceRoutes(app, api);
  webhookRoutes(app, api);
  providerRoutes(app, api);

  // The document describes the API; it holds no secret, so it is served without a token.
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
}
