// The consent page of an authorization request (its sign-in pages are ./login.ts). Each POST answers
// 303 (the page again, or the client).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sessionUser } from '../../authn/session.ts';
import { shortfall } from '../../authn/sufficiency.ts';
import { completeConsent, scopesNeedingConsent } from '../../oauth/authorize/consent.ts';
import { continueAuthorization } from '../../oauth/authorize/index.ts';
import { clientVetting } from '../../oauth/registration/trust.ts';
import { consentPage } from '../../ui/pages.ts';
import type { RouteContext } from '../context.ts';
import { sendPage } from '../pages.ts';
import { formValue, queryValue } from '../forms.ts';
import { csrfFailedPage, sendError, sendOutcome } from '../outcome.ts';
import { requesterOf } from '../requester.ts';
import { openInteraction, type OpenedInteraction, sendExpired } from '../sign-in.ts';

export function interactionRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const deps = { config: ctx.config, store: ctx.store, sealer: ctx.sealer, pending: ctx.pending, codes: ctx.codes };
  const expired = sendExpired;

  /**
   * The consent page's session, when it satisfies the request (src/authn/sufficiency.ts); else the
   * authorization goes on without it (a sign-in, a step-up, or the client told), and that is sent.
   */
  async function consentingSession(request: FastifyRequest, reply: FastifyReply, opened: OpenedInteraction) {
    const now = ctx.now();
    const session = await ctx.browser.session(request, now);
    const user = await sessionUser(ctx.store, session);
    if (session && user && !shortfall(session, user, opened.interaction.need)) return { session, user, now };
    const status = request.method === 'GET' ? 302 : 303;
    const outcome = await continueAuthorization(deps, opened.client, opened.interaction, session, now);
    return { sent: sendOutcome(reply, outcome, status) };
  }

  app.get('/consent', { config: { html: true } }, async (request, reply) => {
    const sealed = queryValue(request, 'interaction');
    const opened = await openInteraction(ctx, request, sealed);
    if (!opened || !sealed) return expired(reply);
    const consenting = await consentingSession(request, reply, opened);
    if ('sent' in consenting) return consenting.sent;
    const { session, user } = consenting;
    const missing = await scopesNeedingConsent(ctx.store, session, opened.interaction.request);
    const asked = missing.length > 0 ? missing : opened.interaction.request.scopes;
    const scopes = asked.map((name) => ({ name, description: ctx.config.scopes.get(name) ?? name }));
    const { request: asking } = opened.interaction;
    const vetting = clientVetting(opened.client, asking.redirectUri);
    const api = asking.resource ? await ctx.store.getResource(asking.resource) : undefined;
    const resource = api ? { resource: { name: api.name, uri: api.uri } } : {};
    const page = {
      interaction: sealed,
      clientName: opened.clientName,
      username: user.username,
      scopes,
      vetting,
      ...resource,
    };
    const csrfToken = ctx.browser.csrfToken(request, reply);
    return sendPage(reply, (ui) => consentPage(ui, { ...page, csrfToken }));
  });

  app.post('/consent', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const sealed = formValue(request, 'interaction');
    const opened = await openInteraction(ctx, request, sealed);
    if (!opened || !sealed) return expired(reply);
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const consenting = await consentingSession(request, reply, opened);
    if ('sent' in consenting) return consenting.sent;
    const { session, user, now } = consenting;
    const decision = formValue(request, 'decision');
    if (decision !== 'allow' && decision !== 'deny') {
      return sendError(reply, 'error.consentAnswer.title', { description: 'decision must be allow or deny' });
    }
    const allow = decision === 'allow';
    const outcome = await completeConsent(deps, opened.interaction, session, user, allow, now, requesterOf(request));
    return sendOutcome(reply, outcome, 303);
  });
}
