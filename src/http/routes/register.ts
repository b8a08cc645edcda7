// Client registration (RFC 7591) at /oauth2/register and its management (RFC 7592) at
// /oauth2/register/{client_id}: JSON in, JSON out, never cached. Present unless TESSERA_REGISTRATION=off.
// Browser apps and agents may register from any origin: the endpoint takes bearer tokens, never cookies.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidClientMetadata } from '../../errors/index.ts';
import { deleteRegistration, readRegistration, registerClient } from '../../oauth/registration/index.ts';
import { type RegistrationAnswer, replaceRegistration } from '../../oauth/registration/index.ts';
import type { RouteContext } from '../context.ts';
import { requesterOf } from '../requester.ts';

function send(reply: FastifyReply, answer: RegistrationAnswer) {
  reply.code(answer.status).header('cache-control', 'no-store').header('pragma', 'no-cache');
  return answer.body ? reply.send(answer.body) : reply.send();
}

/** RFC 7591 §3.1: the metadata is a JSON document. */
function jsonBody(request: FastifyRequest): unknown {
  if (!/^application\/json\b/i.test(request.headers['content-type'] ?? '')) {
    throw new InvalidClientMetadata('the client metadata must be sent as application/json');
  }
  return request.body;
}

export function registrationRoutes(app: FastifyInstance, ctx: RouteContext): void {
  if (ctx.config.registration.mode === 'off') return;
  const deps = { config: ctx.config, store: ctx.store, keys: ctx.keys, refreshTokens: ctx.refreshTokens };
  // Set before the work, so that errors carry them too; no hook on every other route.
  const anyOrigin = (reply: FastifyReply) =>
    reply
      .header('access-control-allow-origin', '*')
      .header('access-control-expose-headers', 'WWW-Authenticate, Retry-After');
  app.options('/oauth2/register', async (_request, reply) =>
    reply
      .code(204)
      .header('access-control-allow-origin', '*')
      .header('access-control-allow-methods', 'POST')
      .header('access-control-allow-headers', 'authorization, content-type')
      .header('access-control-max-age', '600')
      .send(),
  );
  app.post('/oauth2/register', async (request, reply) => {
    anyOrigin(reply);
    const { authorization } = request.headers;
    return send(reply, await registerClient(deps, authorization, jsonBody(request), requesterOf(request), ctx.now()));
  });
  app.get<{ Params: { clientId: string } }>('/oauth2/register/:clientId', async (request, reply) =>
    send(anyOrigin(reply), await readRegistration(deps, request.params.clientId, request.headers.authorization)),
  );
  app.put<{ Params: { clientId: string } }>('/oauth2/register/:clientId', async (request, reply) => {
    anyOrigin(reply);
    const { clientId } = request.params;
    const body = jsonBody(request);
    const requester = requesterOf(request);
    return send(
      reply,
      await replaceRegistration(deps, clientId, request.headers.authorization, body, requester, ctx.now()),
    );
  });
  app.delete<{ Params: { clientId: string } }>('/oauth2/register/:clientId', async (request, reply) => {
    anyOrigin(reply);
    const { clientId } = request.params;
    const requester = requesterOf(request);
    return send(reply, await deleteRegistration(deps, clientId, request.headers.authorization, requester, ctx.now()));
  });
}
