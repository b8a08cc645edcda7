// GET and POST /oauth2/authorize.
import type { FastifyInstance } from 'fastify';
import { authorize } from '../../oauth/authorize/index.ts';
import { paramsFrom, single } from '../../oauth/params.ts';
import type { RouteContext } from '../context.ts';
import { sendOutcome } from '../outcome.ts';

export function authorizeRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const deps = { config: ctx.config, store: ctx.store, sealer: ctx.sealer, pending: ctx.pending, codes: ctx.codes };
  app.get('/oauth2/authorize', { config: { html: true } }, async (request, reply) => {
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
    const now = ctx.now();
    const params = paramsFrom(new URLSearchParams(query));
    // The consent for the client is read with the session; authorize() checks the client itself.
    const outcome = await authorize(
      deps,
      params,
      await ctx.browser.session(request, now, single(params, 'client_id')),
      now,
      () => ctx.browser.binding(request, reply),
    );
    return sendOutcome(reply, outcome, 302);
  });
  app.post('/oauth2/authorize', { config: { html: true } }, async (request, reply) => {
    const now = ctx.now();
    const body = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
    const params = paramsFrom(body);
    const outcome = await authorize(
      deps,
      params,
      await ctx.browser.session(request, now, single(params, 'client_id')),
      now,
      () => ctx.browser.binding(request, reply),
    );
    return sendOutcome(reply, outcome, 303);
  });
}
