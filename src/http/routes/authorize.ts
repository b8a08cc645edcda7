// GET and POST /oauth2/authorize.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { authorize, type AuthorizeOutcome } from '../../oauth/authorize.ts';
import { paramsFrom, single } from '../../oauth/params.ts';
import { errorPage } from '../../ui/pages.ts';
import type { RouteContext } from '../context.ts';
import { sendHtml } from '../plugins/html.ts';

/** Sends the outcome of an authorization step; `status` is 302 after GET and 303 after POST. */
export function sendOutcome(reply: FastifyReply, outcome: AuthorizeOutcome, status: 302 | 303): FastifyReply {
  switch (outcome.kind) {
    case 'error-page':
      return sendHtml(reply.code(400), errorPage({ title: 'Invalid authorization request', error: outcome.error, description: outcome.description }));
    case 'redirect':
      return reply.code(status).header('cache-control', 'no-store').redirect(outcome.location, status);
    case 'login':
      return reply.code(status).header('cache-control', 'no-store').redirect(`/login?interaction=${encodeURIComponent(outcome.interaction)}`, status);
    case 'consent':
      return reply.code(status).header('cache-control', 'no-store').redirect(`/consent?interaction=${encodeURIComponent(outcome.interaction)}`, status);
  }
}

export function authorizeRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const deps = { config: ctx.config, store: ctx.store, sealer: ctx.sealer, codes: ctx.codes };
  app.get('/oauth2/authorize', { config: { html: true } }, async (request, reply) => {
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
    const now = ctx.now();
    const params = paramsFrom(new URLSearchParams(query));
    // The consent for the client is read with the session; authorize() checks the client itself.
    const outcome = await authorize(deps, params, await ctx.browser.session(request, now, single(params, 'client_id')), now);
    return sendOutcome(reply, outcome, 302);
  });
  app.post('/oauth2/authorize', { config: { html: true } }, async (request, reply) => {
    const now = ctx.now();
    const body = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
    const params = paramsFrom(body);
    const outcome = await authorize(deps, params, await ctx.browser.session(request, now, single(params, 'client_id')), now);
    return sendOutcome(reply, outcome, 303);
  });
}
