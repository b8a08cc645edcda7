// What the routes of upstream providers share (./routes/upstream.ts, ./routes/account-upstream.ts,
// and the sign-in pages, ./routes/login.ts and ./sign-in.ts): the domain's deps, the
// cookie that keeps a flow while the person is at the provider, starting a flow, which provider a
// request goes straight to, and the page of a flow that failed, with the way back.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionWrite } from '../authn/session.ts';
import type { LinkOnSignIn } from '../authn/step.ts';
import type { FailureReason, UpstreamFailure, UpstreamSignInDeps, UpstreamStart } from '../authn/upstream/step.ts';
import { beginUpstream } from '../authn/upstream/step.ts';
import type { AuthorizationRequest } from '../oauth/interaction.ts';
import { failureText, type ProviderButton, upstreamFailurePage, type WayBack } from '../ui/upstream.ts';
import { startSessionWithLink } from '../upstream/accounts.ts';
import { UPSTREAM_FLOW_TTL } from '../authn/upstream/flow.ts';
import { CONSOLE } from '../authn/flow.ts';
import type { RouteContext } from './context.ts';
import { sendPage } from './pages.ts';
import { requesterOf } from './requester.ts';

const FLOW_COOKIE = 'tessera_upstream';

export function upstreamDeps(ctx: RouteContext): UpstreamSignInDeps {
  const { deps, flows, links } = ctx.upstream;
  return { store: ctx.store, upstream: deps, flows, links };
}

const secure = (ctx: RouteContext) => ctx.config.issuer.startsWith('https:');

/** The flow's cookie: `__Host-` prefixed over https, as the session's is (./browser.ts). */
export function flowCookieName(ctx: RouteContext): string {
  return `${secure(ctx) ? '__Host-' : ''}${FLOW_COOKIE}`;
}

function cookieOptions(ctx: RouteContext, maxAge?: number) {
  // SameSite=Lax: the provider's redirect back is a top-level GET, which carries it.
  return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: secure(ctx), ...(maxAge ? { maxAge } : {}) };
}

export function clearFlowCookie(ctx: RouteContext, reply: FastifyReply): void {
  reply.clearCookie(flowCookieName(ctx), cookieOptions(ctx));
}

/** Where a failed flow sends the person: their request's sign-in page (local sign-in), or the account's. */
export function wayBack(resume: string | null, purpose: 'sign-in' | 'link' = 'sign-in'): WayBack {
  if (purpose === 'link') return { href: '/account', label: { key: 'upstream.backToAccount' } };
  const label = { key: 'upstream.otherWay' } as const;
  if (resume === null) return { href: '/account/login?local=1', label };
  if (resume === CONSOLE) return { href: '/admin/login?local=1', label };
  return { href: `/login?interaction=${encodeURIComponent(resume)}&local=1`, label };
}

const STATUS: Record<FailureReason, number> = {
  unavailable: 503,
  invalid_response: 502,
  misconfigured: 502,
  provider_error: 400,
  expired: 400,
  unknown_provider: 404,
  disabled: 403,
  linked_elsewhere: 409,
  provider_taken: 409,
};

/** The page of a flow that failed, in words the person can act on, with the way back. */
export function sendUpstreamFailure(reply: FastifyReply, failure: UpstreamFailure): FastifyReply {
  const text = failureText(failure.reason, failure.provider, failure.providerError);
  if (failure.reason === 'unavailable') reply.header('retry-after', '30');
  const back = wayBack(failure.resume, failure.purpose);
  return sendPage(reply.code(STATUS[failure.reason]), (ui) => upstreamFailurePage(ui, { ...text, back }));
}

/** How a sign-in that links an upstream account stores its session: with the link, or not at all. */
export function sessionWithLink(ctx: RouteContext, request: FastifyRequest, link: LinkOnSignIn): SessionWrite {
  const requester = requesterOf(request);
  return (session, signedIn) => startSessionWithLink(ctx.store, { session, link, requester, signedIn });
}

/**
 * A sign-in whose link was refused at the end (the provider's account, or one of the user's at that
 * provider, got linked meanwhile): no session, and the page that says which.
 */
export async function sendLinkRefused(
  ctx: RouteContext,
  reply: FastifyReply,
  progress: { link?: LinkOnSignIn | undefined; resume: string | null },
): Promise<FastifyReply> {
  const { provider: providerId, subject } = progress.link!;
  const provider = await ctx.store.getProvider(providerId);
  const reason = (await ctx.store.getLink(providerId, subject)) ? 'linked_elsewhere' : 'provider_taken';
  const failure = { kind: 'failed', reason, provider: provider?.name ?? null, resume: progress.resume } as const;
  return sendUpstreamFailure(reply, { ...failure, purpose: 'sign-in' });
}

/**
 * Starts a flow: the person goes to the provider (303 after a POST, 302 after a GET), the flow kept
 * in its cookie; or the page saying why not (a provider that does not answer), with the way back.
 */
export async function startUpstream(
  ctx: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
  start: Omit<UpstreamStart, 'bind' | 'now'>,
): Promise<FastifyReply> {
  const started = await beginUpstream(upstreamDeps(ctx), {
    ...start,
    bind: () => ctx.browser.binding(request, reply),
    now: ctx.now(),
  });
  if (started.kind === 'failed') {
    const { reason, detail } = started;
    request.log.info(
      { event: 'upstream_failed', provider: start.providerId, reason, detail },
      'upstream sign-in failed',
    );
    return sendUpstreamFailure(reply, started);
  }
  reply.setCookie(flowCookieName(ctx), started.flow, cookieOptions(ctx, UPSTREAM_FLOW_TTL));
  const status = request.method === 'GET' ? 302 : 303;
  return reply.code(status).header('cache-control', 'no-store').redirect(started.location, status);
}

/** The providers a sign-in page offers, a button each. */
export async function providerButtonsOf(ctx: RouteContext): Promise<ProviderButton[]> {
  return (await ctx.store.listProviders()).map((p) => ({ id: p.id, name: p.name }));
}

/**
 * The provider a sign-in page sends the person straight to: the request's idp_hint; else the one
 * whose domains include the login_hint's email domain; else TESSERA_DEFAULT_PROVIDER. Only a provider
 * that exists: an unknown hint shows the page.
 */
export async function directProvider(
  ctx: RouteContext,
  hints: Pick<AuthorizationRequest, 'idpHint' | 'loginHint'>,
): Promise<string | undefined> {
  const providers = await ctx.store.listProviders();
  const known = (id: string | null | undefined) => (id && providers.some((p) => p.id === id) ? id : undefined);
  const domain = hints.loginHint?.includes('@') ? hints.loginHint.split('@').pop()!.toLowerCase() : undefined;
  const byDomain = domain ? providers.find((p) => p.loginHintDomains.includes(domain))?.id : undefined;
  return known(hints.idpHint) ?? byDomain ?? known(ctx.config.upstream.defaultProvider);
}
