// The link page of a sign-in through an upstream provider (./upstream.ts): a person whose account there
// is not linked to one here yet, and who must not be given a new account (an account here has the
// email the provider verified, or the provider only links), proves which account is theirs by signing
// in to it, here, with its password (throttled as any sign-in). Then the link is made and the sign-in
// goes on from the provider's factor (the route hands it to ../flow.ts): the password proved the
// account, the provider signs the person in.
import type { Requester } from '../../events/index.ts';
import type { ThrottleObserver, ThrottlePolicy, Refusal } from '../throttle.ts';
import type { ThrottleStore } from '../../store/throttles.ts';
import type { UserStore } from '../../store/users.ts';
import { linkUser } from '../../upstream/accounts.ts';
import type { PendingLink } from '../../upstream/flow.ts';
import { securityEvent } from '../../events/index.ts';
import { signIn } from '../password/check.ts';
import type { Carried, Verification } from '../step.ts';
import type { UpstreamSignInDeps } from './step.ts';

export interface LinkDeps extends UpstreamSignInDeps {
  store: UpstreamSignInDeps['store'] & UserStore & ThrottleStore;
  throttle: ThrottlePolicy;
  observer?: Pick<ThrottleObserver, 'signInFailed' | 'signInRefused'>;
}

/** The link page's pending link, when genuine, unexpired, of this browser, and its provider still there. */
export async function openPendingLink(
  deps: Pick<UpstreamSignInDeps, 'links' | 'store'>,
  input: { sealed: string | undefined; isBound: (browser: string) => boolean; now: number },
): Promise<{ pending: PendingLink; providerName: string } | undefined> {
  const pending = deps.links.openAt(input.sealed, input.now);
  if (!pending || !input.isBound(pending.browser)) return undefined;
  const provider = await deps.store.getProvider(pending.provider);
  return provider && { pending, providerName: provider.name };
}

export type LinkOutcome =
  | { kind: 'failed' }
  | { kind: 'refused'; refusal: Refusal }
  /** The account has another account of the provider linked, or the person got linked meanwhile. */
  | { kind: 'taken' }
  | { kind: 'gone' }
  /** Linked: the provider's factor, for what the link page's sign-in was for. */
  | (Extract<Verification, { kind: 'verified' }> & { carried: Carried });

/** The link page's form: the account's password, then the link, then the sign-in goes on. */
export async function linkWithPassword(
  deps: LinkDeps,
  input: {
    pending: PendingLink;
    username: string;
    password: string;
    knownDevice: string | undefined;
    requester: Requester;
    now: number;
  },
): Promise<LinkOutcome> {
  const { pending, requester, now } = input;
  const attempt = { ...input, clientId: pending.clientId };
  const checked = await signIn(deps.store, deps.throttle, attempt, deps.observer);
  if (checked.kind !== 'signed-in') return checked;
  const provider = await deps.store.getProvider(pending.provider);
  if (!provider) return { kind: 'gone' };
  const { user } = checked;
  const identity = {
    subject: pending.subject,
    email: pending.email,
    emailVerified: pending.emailVerified,
    preferredUsername: null,
    name: null,
    givenName: null,
    familyName: null,
    amr: [],
  };
  const linked = await linkUser(deps.store, { provider, identity, userId: user.id, by: 'sign_in', requester, now });
  if (!linked) return { kind: 'taken' };
  const data = { provider: provider.id, subject: pending.subject };
  const signedIn = securityEvent('user.upstream_signed_in', now, { userId: user.id, requester, data });
  await deps.store.touchLink(provider.id, pending.subject, now, signedIn);
  const carried = { need: pending.need, resume: pending.resume, clientId: pending.clientId, browser: pending.browser };
  return { kind: 'verified', user, factor: { ...pending.factor, at: now }, carried };
}
