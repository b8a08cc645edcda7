// GET and POST /oauth2/authorize.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authorize } from '../../oauth/authorize/index.ts';
import { paramsFrom, single } from '../../oauth/params.ts';
import type { RouteContext } from '../context.ts';
import { sendOutcome } from '../outcome.ts';

export function authorizeRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const deps = {
    config: ctx.config,
    store: ctx.store,
    sealer: ctx.sealer,
    pending: ctx.pending,
    codes: ctx.codes,
    requestObjects: ctx.requestObjects,
  };
  /** The same request by either method; only the redirect's status differs (302 after GET, 303 after POST). */
  async function answer(request: FastifyRequest, reply: FastifyReply, form: URLSearchParams, status: 302 | 303) {
    const now = ctx.now();
    const params = paramsFrom(form);
    // The consent for the client is read with the session; authorize() checks the client itself.
    const outcome = await authorize(
      deps,
      params,
      await ctx.browser.session(request, now, single(params, 'client_id')),
      now,
      () => ctx.browser.binding(request, reply),
    );
    return sendOutcome(reply, outcome, status);
  }
  app.get('/oauth2/authorize', { config: { html: true } }, async (request, reply) => {
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
    return answer(request, reply, new URLSearchParams(query), 302);
  });
  app.post('/oauth2/authorize', { config: { html: true } }, async (request, reply) => {
    const body = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
    return answer(request, reply, body, 303);
  });
}
