// Signing in through an upstream provider (src/upstream): a first step, after which the policy still
// asks for a second factor where the request or the user's own settings want one. Its factor says
// `fed` in amr: RFC 8176 registers no value for "another provider signed the person in", and `fed`
// is the one Microsoft Entra ID states for exactly that; the upstream's own values (its `pwd`,
// `otp`) are not repeated as if Tessera had checked them, unless the operator trusts the provider's
// multi-factor sign-ins (--trust-upstream-mfa): then a sign-in whose amr has `mfa` counts as two
// factors (`upstream-mfa`) and its registered values are stated with `fed`. Only through a link that
// exists (or with the user it makes): a sign-in that links an account here now never lets the
// provider's factors stand in for the account's own second factor.
//
// Its pages (src/http/routes/upstream.ts): the sign-in page's button starts a flow (beginUpstream),
// the provider's answer comes back to the callback (completeUpstream), and a person whose account
// there is not linked yet proves which account here is theirs (./link.ts). Either way the route hands
// the verified factor to the sign-in flow (../flow.ts), with the purpose the flow's cookie carried.
import { type Requester, securityEvent } from '../../events/index.ts';
import type { EventStore } from '../../store/events.ts';
import type { UpstreamProvider } from '../../store/upstream.ts';
import { type AccountStore, linkToAccount, resolveAccount } from '../../upstream/accounts.ts';
import { UpstreamError, type UpstreamFailureReason } from '../../upstream/errors.ts';
import { type PendingLinkSealer, UPSTREAM_FLOW_TTL, type UpstreamFlowSealer } from './flow.ts';
import type { UpstreamIdentity } from '../../upstream/identity.ts';
import { authorizationAt, identityAt, type UpstreamDeps } from '../../upstream/index.ts';
import type { Factor } from '../factor.ts';
import type { Requirement } from '../requirement.ts';
import { ARRIVING_STEP, type Carried, type EnrolmentStore, type Step, type Verification } from '../step.ts';

// A first step only: the policy asks `enrolled` of steps that may follow another, which these never
// do. Whether a user has links is the account page's question (src/account/upstream.ts). Verified
// when the provider's answer comes back (completeUpstream).
export const upstreamStep = { method: 'upstream', ...ARRIVING_STEP, verify: completeUpstream } as const satisfies Step<
  UpstreamSignInDeps,
  UpstreamReturn,
  UpstreamOutcome
>;

/** A provider's sign-in that stated `mfa`, from a provider trusted for it: two factors. */
export const upstreamMfaStep = { ...upstreamStep, method: 'upstream-mfa', factors: 2 } as const;

/** The values of the IANA "Authentication Method Reference Values" registry (RFC 8176 §5.1). */
const REGISTERED_AMR = new Set(
  'face fpt geo hwk iris kba mca mfa otp pin pop pwd rba retina sc sms swk tel user vbm wia'.split(' '),
);

/** The factor a provider's sign-in makes (see above); `linking` an existing account: one factor only. */
export function upstreamFactor(
  provider: UpstreamProvider,
  identity: UpstreamIdentity,
  now: number,
  linking = false,
): Factor {
  if (provider.trustUpstreamMfa && !linking && identity.amr.includes('mfa')) {
    const stated = identity.amr.filter((v) => REGISTERED_AMR.has(v) && v !== 'mfa');
    return { method: 'upstream-mfa', amr: ['fed', ...new Set(stated)], at: now };
  }
  return { method: 'upstream', amr: ['fed'], at: now };
}

export interface UpstreamSignInDeps {
  store: EnrolmentStore & AccountStore & EventStore;
  upstream: UpstreamDeps;
  flows: UpstreamFlowSealer;
  links: PendingLinkSealer;
}

/** Why a sign-in through a provider did not go on: the provider's fault, or ours to explain. */
export type FailureReason =
  | UpstreamFailureReason
  /** The flow is gone: expired, started in another browser or tab, or already used. */
  | 'expired'
  /** No such provider (any more). */
  | 'unknown_provider'
  | 'disabled'
  /** Linking: that account at the provider is linked to another user here. */
  | 'linked_elsewhere'
  /** Linking: the user has another account of that provider linked. */
  | 'provider_taken';

export interface UpstreamFailure {
  kind: 'failed';
  reason: FailureReason;
  /** The provider's name, when known. */
  provider: string | null;
  /** The provider's own error code (e.g. access_denied), when it sent one. */
  providerError?: string | undefined;
  /** For the operator's log, never shown: what went wrong (the library's error, the address refused). */
  detail?: string | undefined;
  /** Where the person goes back to: the sealed authorization request, or null for the account page. */
  resume: string | null;
  /** What the flow was for: a failed link goes back to the account page. */
  purpose: 'sign-in' | 'link';
}

export interface UpstreamStart {
  providerId: string;
  purpose: 'sign-in' | 'link';
  resume: string | null;
  clientId: string | null;
  need: Requirement;
  /** The signed-in user linking another way in (purpose 'link'). */
  userId: string | null;
  /** OIDC Core §3.1.2.1 login_hint, passed on. */
  loginHint: string | null;
  bind: () => string;
  now: number;
}

/** Sends the person to the provider (its URL), with the flow to keep in the browser meanwhile. */
export async function beginUpstream(
  deps: UpstreamSignInDeps,
  start: UpstreamStart,
): Promise<{ kind: 'redirect'; location: string; flow: string } | UpstreamFailure> {
  const { now, resume } = start;
  const provider = await deps.store.getProvider(start.providerId);
  const { purpose } = start;
  if (!provider) return { kind: 'failed', reason: 'unknown_provider', provider: null, resume, purpose };
  const { need } = start;
  // A sign-in the request wants fresh is asked fresh of the provider too (its auth_time is then checked).
  const maxAge = !need.forceLogin && need.freshSince > 0 ? Math.max(0, now - need.freshSince) : null;
  const hints = { forceLogin: need.forceLogin, maxAge, loginHint: start.loginHint };
  try {
    const { url, checks } = await authorizationAt(deps.upstream, provider, hints);
    const flow = deps.flows.seal(
      {
        provider: provider.id,
        purpose,
        checks,
        resume,
        clientId: start.clientId,
        need,
        userId: start.userId,
        browser: start.bind(),
        exp: now + UPSTREAM_FLOW_TTL,
      },
      now * 1000,
    );
    return { kind: 'redirect', location: url.href, flow };
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    const { reason, providerError, message: detail } = err;
    return { kind: 'failed', reason, provider: provider.name, providerError, detail, resume, purpose };
  }
}

export interface UpstreamReturn {
  providerId: string;
  /** The flow's cookie. */
  flow: string | undefined;
  /** The provider's answer: the callback's query. */
  query: URLSearchParams;
  isBound: (browser: string) => boolean;
  /** The user signed in in this browser now, if any (a link is made for them only). */
  sessionUserId: string | null;
  requester: Requester;
  now: number;
}

export type UpstreamOutcome =
  /** Signed in by the provider: the flow goes on with `factor`, for what the flow's cookie carried. */
  | (Extract<Verification, { kind: 'verified' }> & { carried: Carried })
  /** No link yet: the link page, with this sealed PendingLink. */
  | { kind: 'link-needed'; link: string }
  /** Linked to the signed-in user (the account page's purpose). */
  | { kind: 'linked'; provider: string }
  | UpstreamFailure;

/** The provider's answer: verified, then a sign-in (or a link) goes on, or what failed. */
export async function completeUpstream(deps: UpstreamSignInDeps, back: UpstreamReturn): Promise<UpstreamOutcome> {
  const { now, requester } = back;
  const flow = deps.flows.openAt(back.flow, now);
  const resume = flow?.resume ?? null;
  const purpose = flow?.purpose ?? 'sign-in';
  if (!flow || flow.provider !== back.providerId || !back.isBound(flow.browser)) {
    return { kind: 'failed', reason: 'expired', provider: null, resume, purpose };
  }
  const provider = await deps.store.getProvider(flow.provider);
  if (!provider) return { kind: 'failed', reason: 'unknown_provider', provider: null, resume, purpose };
  const fail = async (reason: FailureReason, userId: string | null, providerError?: string, detail?: string) => {
    const data = { provider: provider.id, reason, ...(providerError ? { error: providerError } : {}) };
    await deps.store.recordEvent(securityEvent('user.upstream_sign_in_failed', now, { userId, requester, data }));
    return {
      kind: 'failed',
      reason,
      provider: provider.name,
      providerError,
      detail,
      resume,
      purpose,
    } satisfies UpstreamFailure;
  };
  // Another tab's flow, or an answer replayed: nothing is sent to the provider.
  if (back.query.get('state') !== flow.checks.state) {
    return { kind: 'failed', reason: 'expired', provider: null, resume, purpose };
  }
  if (flow.purpose === 'link' && (flow.userId === null || back.sessionUserId !== flow.userId)) {
    return { kind: 'failed', reason: 'expired', provider: provider.name, resume, purpose };
  }
  let verified: Awaited<ReturnType<typeof identityAt>>;
  try {
    verified = await identityAt(deps.upstream, provider, back.query, flow.checks);
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    return fail(err.reason, flow.userId, err.providerError, err.message);
  }
  if (flow.purpose === 'link') {
    let identity: UpstreamIdentity;
    try {
      // The email too, which the account page shows to tell the person's accounts there apart.
      identity = await verified.profile();
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      return fail(err.reason, flow.userId, err.providerError, err.message);
    }
    const input = { provider, identity, userId: flow.userId!, requester, now };
    const linked = await linkToAccount(deps.store, input);
    return linked === 'linked' || linked === 'already'
      ? { kind: 'linked', provider: provider.name }
      : fail(linked, flow.userId);
  }
  const { identity } = verified;
  let resolved: Awaited<ReturnType<typeof resolveAccount>>;
  try {
    resolved = await resolveAccount(deps.store, { provider, identity, profile: verified.profile, requester, now });
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    return fail(err.reason, null, err.providerError, err.message);
  }
  if (resolved.kind === 'refused') return fail(resolved.reason, resolved.userId);
  if (resolved.kind === 'link-needed') {
    const { identity: person } = resolved;
    const link = deps.links.seal(
      {
        provider: provider.id,
        subject: person.subject,
        email: person.email,
        emailVerified: person.emailVerified,
        reason: resolved.reason,
        resume,
        clientId: flow.clientId,
        need: flow.need,
        browser: flow.browser,
        exp: now + UPSTREAM_FLOW_TTL,
      },
      now * 1000,
    );
    return { kind: 'link-needed', link };
  }
  // A link by a trusted email is written with the session, once the user's own steps are done.
  const link = resolved.via === 'email' ? { link: resolved.link } : {};
  const carried = { need: flow.need, resume, clientId: flow.clientId, browser: flow.browser, ...link };
  const factor = upstreamFactor(provider, identity, now, resolved.via === 'email');
  return { kind: 'verified', user: resolved.user, factor, carried };
}
