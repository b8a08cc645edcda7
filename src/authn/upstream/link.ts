// The link page of a sign-in through an upstream provider (./upstream.ts): a person whose account there
// is not linked to one here yet, and who must not be given a new account (an account here has the
// email the provider verified, or the provider only links), proves which account is theirs by signing
// in to it, here, as it alone would sign in: its password (throttled as any sign-in), then whatever
// else the policy asks of it (its second factor), on the ordinary steps' pages. The provider's sign-in
// counts for nothing in it. The link travels with the sign-in (LinkOnSignIn) and is written with its
// session (src/upstream/accounts.ts), never before: a second factor not given links nothing.
import type { Requester } from '../../events/index.ts';
import type { ThrottleObserver, ThrottlePolicy, Refusal } from '../throttle.ts';
import type { ThrottleStore } from '../../store/throttles.ts';
import { addressOwners, type User, type UserStore } from '../../store/users.ts';
import type { PendingLink } from './flow.ts';
import { signIn } from '../password/check.ts';
import { passwordStep } from '../password/step.ts';
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
  /** The password is right, but of another account than the one with the address the page named. */
  | { kind: 'not-named' }
  /** The person got linked meanwhile, or the account has another account of the provider linked. */
  | { kind: 'taken'; reason: 'linked_elsewhere' | 'provider_taken' }
  | { kind: 'gone' }
  /** Linked: the provider's factor, for what the link page's sign-in was for. */
  | (Extract<Verification, { kind: 'verified' }> & { carried: Carried });

/** Whether `user` is an account the page named: one that the provider's verified address names. */
async function named(store: LinkDeps['store'], pending: PendingLink, user: User): Promise<boolean> {
  if (pending.reason === 'link_only') return true;
  const owners = pending.email === null ? [] : addressOwners(await store.findUsersByEmail(pending.email));
  return owners.some((owner) => owner.id === user.id);
}

/** The link page's form: the account's password, then its own sign-in goes on, and links when complete. */
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
  const { pending, now } = input;
  const attempt = { ...input, clientId: pending.clientId };
  const checked = await signIn(deps.store, deps.throttle, attempt, deps.observer);
  if (checked.kind !== 'signed-in') return checked;
  const { user } = checked;
  if (!(await named(deps.store, pending, user))) return { kind: 'not-named' };
  if (!(await deps.store.getProvider(pending.provider))) return { kind: 'gone' };
  if (await deps.store.getLink(pending.provider, pending.subject)) return { kind: 'taken', reason: 'linked_elsewhere' };
  if ((await deps.store.listLinks(user.id)).some((l) => l.providerId === pending.provider)) {
    return { kind: 'taken', reason: 'provider_taken' };
  }
  // The account's own password is this sign-in's first factor; the provider's counts for nothing.
  const link = { provider: pending.provider, subject: pending.subject, email: pending.email, by: 'sign_in' } as const;
  const { need, resume, clientId, browser } = pending;
  const factor = { method: passwordStep.method, amr: ['pwd'], at: now };
  return { kind: 'verified', user, factor, carried: { need, resume, clientId, browser, link } };
}
