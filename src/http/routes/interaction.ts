// The sign-in (its first step, the password) and consent pages of an authorization request. Each POST
// answers 303 (the page again, the next step, or the client).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sessionUser } from '../../authn/session.ts';
import { signInWithPassword } from '../../authn/password/step.ts';
import { shortfall } from '../../authn/sufficiency.ts';
import { completeConsent, continueAuthorization, scopesNeedingConsent } from '../../oauth/authorize/index.ts';
import { clientVetting } from '../../oauth/registration/trust.ts';
import { consentPage, loginPage } from '../../ui/pages.ts';
import type { RouteContext } from '../context.ts';
import { sendPage } from '../pages.ts';
import { formValue, queryValue } from '../forms.ts';
import { credentials, csrfFailedPage, sendError, sendOutcome, sendThrottled } from '../outcome.ts';
import { passkeySignInOptions, signInError } from '../passkeys.ts';
import { requesterOf } from '../requester.ts';
import { finishSignIn, mailLinksOf, openInteraction, type OpenedInteraction, sendExpired } from '../sign-in.ts';
import { directProvider, providerButtonsOf, startUpstream } from '../upstream.ts';

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

  app.get('/login', { config: { html: true } }, async (request, reply) => {
    const sealed = queryValue(request, 'interaction');
    const opened = await openInteraction(ctx, request, sealed);
    if (!opened || !sealed) return expired(reply);
    const error = queryValue(request, 'error');
    // idp_hint, a login_hint of a provider's domain, or TESSERA_DEFAULT_PROVIDER: straight to that
    // provider, unless the person came back for local sign-in (`local`, or a failed sign-in).
    const { request: asked, need } = opened.interaction;
    const direct = error || queryValue(request, 'local') ? undefined : await directProvider(ctx, asked);
    if (direct) {
      return startUpstream(ctx, request, reply, {
        providerId: direct,
        purpose: 'sign-in',
        resume: sealed,
        clientId: asked.clientId,
        need,
        userId: null,
        loginHint: asked.loginHint ?? null,
      });
    }
    const failed = signInError(error);
    const csrfToken = ctx.browser.csrfToken(request, reply);
    const vetting = clientVetting(opened.client, opened.interaction.request.redirectUri);
    const passkeyOptions = await passkeySignInOptions(ctx, request, reply);
    const providers = await providerButtonsOf(ctx);
    const mail = mailLinksOf(ctx);
    const page = { interaction: sealed, csrfToken, clientName: opened.clientName, vetting, passkeyOptions, providers };
    return sendPage(reply, (ui) => loginPage(ui, { ...page, ...failed, mail }));
  });

  app.post('/login', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const sealed = formValue(request, 'interaction');
    const opened = await openInteraction(ctx, request, sealed);
    if (!opened || !sealed) return expired(reply);
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const clientId = opened.interaction.request.clientId;
    const [username, password] = credentials(request);
    const outcome = await signInWithPassword(
      { store: ctx.store, pending: ctx.pending, throttle: ctx.config.throttle, observer: ctx.security },
      {
        username,
        password,
        knownDevice: ctx.browser.knownDevice(request, username),
        clientId,
        requester: requesterOf(request),
        need: opened.interaction.need,
        resume: sealed,
        bind: () => ctx.browser.binding(request, reply),
        now: ctx.now(),
      },
    );
    if (outcome.kind === 'refused') {
      const vetting = clientVetting(opened.client, opened.interaction.request.redirectUri);
      // The other ways in stay offered: a passkey, a provider, a reset by mail are not what is throttled.
      const passkeyOptions = await passkeySignInOptions(ctx, request, reply);
      const [providers, mail] = [await providerButtonsOf(ctx), mailLinksOf(ctx)];
      const page = {
        interaction: sealed,
        clientName: opened.clientName,
        username,
        vetting,
        passkeyOptions,
        providers,
        mail,
      };
      return sendThrottled(reply, { ...page, csrfToken: ctx.browser.csrfToken(request, reply) }, outcome.refusal);
    }
    if (outcome.kind === 'failed') {
      request.log.info({ event: 'login_failed' }, 'login failed');
      return reply.redirect(`/login?interaction=${encodeURIComponent(sealed)}&error=login_failed`, 303);
    }
    return finishSignIn(ctx, request, reply, outcome);
  });

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
