// Signing in through an upstream provider: the sign-in page's button (POST /login/upstream/:provider),
// the provider's answer (GET /login/upstream/:provider/callback, the redirect URI registered at the
// provider), and the link page of a person whose account there is not linked yet (/login/link),
// whose password hands over to that account's own sign-in (its second factor on the ordinary pages).
// A sign-in each ends in the flow (src/authn/flow.ts) and finishSignIn (../sign-in.ts), the page of
// what failed, or the account page.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { linkWithPassword, openPendingLink } from '../../authn/upstream/link.ts';
import { upstreamStep } from '../../authn/upstream/step.ts';
import { advance, beginCarried } from '../../authn/flow.ts';
import type { PendingLink } from '../../authn/upstream/flow.ts';
import { LOGIN_FAILED } from '../../ui/pages.ts';
import { linkAccountPage } from '../../ui/upstream.ts';
import type { RouteContext } from '../context.ts';
import { formValue, queryValue } from '../forms.ts';
import { credentials, csrfFailedPage, sendExpiredLink, throttledText } from '../outcome.ts';
import { sendPage } from '../pages.ts';
import type { PageContext, Text } from '../../ui/layout.ts';
import { requesterOf } from '../requester.ts';
import {
  finishSignIn,
  keepInteractionLocale,
  postedFor,
  purposeOf,
  sendExpired,
  startUpstreamSignIn,
} from '../sign-in.ts';
import { clearFlowCookie, flowCookieName, sendUpstreamFailure, upstreamDeps, wayBack } from '../upstream.ts';

const PROVIDER_ID = /^[a-z0-9][a-z0-9-]{0,39}$/;

export function upstreamRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const signIn = { store: ctx.store, pending: ctx.pending };
  const providerOf = (request: FastifyRequest) => {
    const id = (request.params as { provider?: string }).provider ?? '';
    return PROVIDER_ID.test(id) ? id : undefined;
  };
  const unknown = (resume: string | null) =>
    ({ kind: 'failed', reason: 'unknown_provider', provider: null, resume, purpose: 'sign-in' }) as const;

  // The sign-in page's button: from a request's sign-in page (with its interaction), or the account's.
  app.post('/login/upstream/:provider', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const signInFor = await postedFor(ctx, request, formValue(request, 'interaction') ?? '');
    if (signInFor === undefined) return sendExpired(reply);
    const providerId = providerOf(request);
    if (!providerId)
      return sendUpstreamFailure(reply.code(404), unknown(purposeOf(ctx, request, reply, signInFor).resume));
    return startUpstreamSignIn(ctx, request, reply, providerId, signInFor);
  });

  // The provider's answer: a top-level GET from the provider's site, so only the flow's cookie
  // (SameSite=Lax) and its state tie it to this browser's sign-in.
  app.get('/login/upstream/:provider/callback', { config: { html: true } }, async (request, reply) => {
    const providerId = providerOf(request);
    const query = new URLSearchParams(request.url.split('?')[1] ?? '');
    const flow = request.cookies[flowCookieName(ctx)];
    clearFlowCookie(ctx, reply);
    const now = ctx.now();
    const session = await ctx.browser.session(request, now);
    const outcome = await upstreamStep.verify(upstreamDeps(ctx), {
      providerId: providerId ?? '',
      flow,
      query,
      isBound: (browser) => ctx.browser.isBound(request, browser),
      sessionUserId: session?.userId ?? null,
      requester: requesterOf(request),
      now,
    });
    switch (outcome.kind) {
      case 'failed': {
        const { reason, detail } = outcome;
        request.log.info({ event: 'upstream_failed', provider: providerId, reason, detail }, 'upstream sign-in failed');
        return sendUpstreamFailure(reply, outcome);
      }
      case 'linked':
        return reply.redirect('/account?upstream=linked', 303);
      case 'link-needed':
        return reply.redirect(`/login/link?link=${encodeURIComponent(outcome.link)}`, 303);
      default:
        return finishSignIn(ctx, request, reply, await advance(signIn, beginCarried(outcome, now)));
    }
  });

  const linkPage =
    (
      pending: PendingLink,
      providerName: string,
      link: string,
      csrfToken: string,
      more: { error?: Text; username?: string } = {},
    ) =>
    (ui: PageContext) =>
      linkAccountPage(ui, {
        providerName,
        email: pending.email,
        reason: pending.reason,
        link,
        csrfToken,
        back: wayBack(pending.resume),
        ...more,
      });

  app.get('/login/link', { config: { html: true } }, async (request, reply) => {
    const sealed = queryValue(request, 'link');
    const isBound = (browser: string) => ctx.browser.isBound(request, browser);
    const opened = await openPendingLink(upstreamDeps(ctx), { sealed, isBound, now: ctx.now() });
    if (!opened || !sealed) return sendExpiredLink(reply);
    const failed = queryValue(request, 'error') === 'login_failed' ? { error: LOGIN_FAILED } : {};
    const csrfToken = ctx.browser.csrfToken(request, reply);
    keepInteractionLocale(ctx, request, opened.pending.resume);
    return sendPage(reply, linkPage(opened.pending, opened.providerName, sealed, csrfToken, failed));
  });

  app.post('/login/link', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const sealed = formValue(request, 'link');
    const now = ctx.now();
    const isBound = (browser: string) => ctx.browser.isBound(request, browser);
    const opened = await openPendingLink(upstreamDeps(ctx), { sealed, isBound, now });
    if (!opened || !sealed) return sendExpiredLink(reply);
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const [username, password] = credentials(request);
    const outcome = await linkWithPassword(
      { ...upstreamDeps(ctx), store: ctx.store, throttle: ctx.config.throttle, observer: ctx.security },
      {
        pending: opened.pending,
        username,
        password,
        knownDevice: ctx.browser.knownDevice(request, username),
        requester: requesterOf(request),
        now,
      },
    );
    const { pending, providerName } = opened;
    switch (outcome.kind) {
      case 'failed':
        return reply.redirect(`/login/link?link=${encodeURIComponent(sealed)}&error=login_failed`, 303);
      case 'refused':
      case 'not-named': {
        const error: Text =
          outcome.kind === 'refused'
            ? throttledText(outcome.refusal)
            : { key: 'link.notNamed', values: { email: pending.email ?? '' } };
        const page = linkPage(pending, providerName, sealed, ctx.browser.csrfToken(request, reply), {
          error,
          username,
        });
        keepInteractionLocale(ctx, request, pending.resume);
        if (outcome.kind === 'not-named') return sendPage(reply.code(403), page);
        return sendPage(reply.code(429).header('retry-after', String(outcome.refusal.retryAfter)), page);
      }
      case 'taken':
      case 'gone': {
        const reason = outcome.kind === 'taken' ? outcome.reason : 'unknown_provider';
        const failure = {
          kind: 'failed',
          reason,
          provider: providerName,
          resume: pending.resume,
          purpose: 'sign-in',
        } as const;
        return sendUpstreamFailure(reply, failure);
      }
      default:
        return finishSignIn(ctx, request, reply, await advance(signIn, beginCarried(outcome, now)));
    }
  });
}
