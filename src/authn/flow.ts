// A sign-in between its steps. A route verifies a step (./step.ts) and hands its factor to `advance`:
// the policy (./policy.ts) says whether the sign-in is complete, and then it becomes a session
// (../http/browser.ts starts it), or which step comes next: then what is done so far travels to that
// step's page sealed, bound to the browser and short-lived (a PendingSignIn), never as a session, so
// nothing can be done with half a sign-in. The steps never call this module: it calls none of them
// either, only asks the registry (./registry.ts) what the user has enrolled.
import type { User } from '../store/users.ts';
import { Sealer } from '../tokens/sealed.ts';
import type { Secrets } from '../tokens/secrets.ts';
import type { Factor } from './factor.ts';
import { nextStep } from './policy.ts';
import type { Requirement } from './requirement.ts';
import type { SignedIn } from './session.ts';
import { enrolledMethods, steps } from './registry.ts';
import type { Carried, EnrolmentStore, LinkOnSignIn, Step } from './step.ts';

export type { LinkOnSignIn } from './step.ts';

/** How long the next step's page may take: long enough to find a phone. */
export const PENDING_SIGN_IN_TTL = 10 * 60;

/**
 * The admin console's sign-in (/admin/login) as a sign-in's `resume`: once signed in, back to the
 * console. Never a sealed interaction (those are long and dotted), nor a path.
 */
export const CONSOLE = 'console';

/** What a sign-in has done so far, while it waits for its next step. */
export interface PendingSignIn {
  userId: string;
  /** Every factor so far: this sign-in's, and on a step-up the session's before them. */
  factors: Factor[];
  /** The sign-in's auth_time: its first factor's time, or on a step-up the session's. */
  authTime: number;
  need: Requirement;
  /** The steps the policy offered next, in order; the page accepts only these. */
  offered: string[];
  /** The user enrols the step offered now (TESSERA_MFA=required, ./policy.ts `enrol`). */
  enrol?: boolean;
  /**
   * What to go on with once signed in: the sealed authorization request, null for the account page,
   * CONSOLE for the admin console, or a path of ours (starting with `/`) whose page asked for the
   * steps (a password reset's).
   */
  resume: string | null;
  /** The client the sign-in is for (events and throttling), or null. */
  clientId: string | null;
  /** The browser it was started in (src/http/browser.ts binding): refused in any other. */
  browser: string;
  /** The upstream account this sign-in links once complete (a link page's, ./upstream/link.ts). */
  link?: LinkOnSignIn;
  exp: number;
}

export class PendingSignInSealer extends Sealer<PendingSignIn> {
  constructor(secrets: Secrets) {
    super(secrets, 'tessera pending sign-in v1');
  }
}

/** Where a sign-in stands after a step. */
export type SignInProgress =
  /** Complete: start a session (with the link, when there is one), then resume. */
  | {
      kind: 'signed-in';
      signedIn: SignedIn;
      user: User;
      resume: string | null;
      clientId: string | null;
      link?: LinkOnSignIn;
    }
  /** Another step: its page is /login/<method>?pending=<pending>. */
  | { kind: 'next-step'; method: string; pending: string };

export interface SignInDeps {
  store: EnrolmentStore;
  pending: PendingSignInSealer;
  /** The steps a sign-in may use: every one (./registry.ts) unless said otherwise. */
  steps?: readonly Step[];
}

/** A sign-in so far, with the factor just done last in `factors`. */
export interface SignInSoFar {
  user: User;
  factors: Factor[];
  authTime: number;
  need: Requirement;
  resume: string | null;
  clientId: string | null;
  /** This browser's binding, asked for only when a next step must be sealed. */
  bind: () => string;
  link?: LinkOnSignIn;
  now: number;
}

/** The link a sign-in carries, as a field to spread. */
const linkOf = (so: { link?: LinkOnSignIn | undefined }) => (so.link ? { link: so.link } : {});

/**
 * After a step verified its factor (last in `so.factors`): complete, or sealed for the next step. A
 * requirement the user's enrolled steps cannot meet ends the sign-in at the level reached: the user
 * did sign in, and what asked for more (the authorization request) answers that it could not be met.
 */
export async function advance(deps: SignInDeps, so: SignInSoFar): Promise<SignInProgress> {
  const registry = deps.steps ?? steps();
  const next = nextStep(so.factors, so.need, await enrolledMethods(deps.store, so.user, registry), registry);
  if (next.kind === 'step' || next.kind === 'enrol') {
    const offered = next.kind === 'step' ? next.methods : [next.method];
    const pending = holdSignIn(deps, so, offered, next.kind === 'enrol');
    return { kind: 'next-step', method: offered[0]!, pending };
  }
  const signedIn = { userId: so.user.id, authTime: so.authTime, factors: so.factors };
  return { kind: 'signed-in', signedIn, user: so.user, resume: so.resume, clientId: so.clientId, ...linkOf(so) };
}

/** The sign-in so far, sealed for the page of `offered`'s first step. */
export function holdSignIn(deps: SignInDeps, so: SignInSoFar, offered: string[], enrol = false): string {
  return deps.pending.seal({
    userId: so.user.id,
    factors: so.factors,
    authTime: so.authTime,
    need: so.need,
    offered,
    ...(enrol ? { enrol } : {}),
    resume: so.resume,
    clientId: so.clientId,
    browser: so.bind(),
    ...linkOf(so),
    exp: so.now + PENDING_SIGN_IN_TTL,
  });
}

/**
 * The sign-in a first step begins (its factor the first), for what the page that posted it was for,
 * unless the step carried that itself (an upstream provider's flow, a reset link).
 */
export function begin(
  verified: { user: User; factor: Factor; carried?: Partial<Carried> | undefined },
  purpose: Omit<Carried, 'browser'> & { bind: () => string },
  now: number,
): SignInSoFar {
  const { need, resume, clientId, browser, link } = { ...purpose, ...verified.carried };
  const bind = browser !== undefined ? () => browser : purpose.bind;
  const factors = [verified.factor];
  return { user: verified.user, factors, authTime: now, need, resume, clientId, bind, ...linkOf({ link }), now };
}

/** The sign-in a first step begins that carried all it is for itself (an upstream provider's flow). */
export function beginCarried(verified: { user: User; factor: Factor; carried: Carried }, now: number): SignInSoFar {
  const { need, resume, clientId, browser } = verified.carried;
  return begin(verified, { need, resume, clientId, bind: () => browser }, now);
}

/** What a pending sign-in was, as the sign-in so far (to go on with, or to hold again). */
export function soFar(opened: { pending: PendingSignIn; user: User }, now: number, factor?: Factor): SignInSoFar {
  const { pending, user } = opened;
  return {
    user,
    factors: factor ? [...pending.factors, factor] : pending.factors,
    authTime: pending.authTime,
    need: pending.need,
    resume: pending.resume,
    clientId: pending.clientId,
    bind: () => pending.browser,
    ...linkOf(pending),
    now,
  };
}

/**
 * A pending sign-in a step's page was given, if it is genuine, unexpired, started in this browser
 * (`isBound`), offers `method`, and its user can still sign in.
 */
export async function openPendingSignIn(
  deps: SignInDeps,
  input: { sealed: string | undefined; method: string; isBound: (browser: string) => boolean; now: number },
): Promise<{ pending: PendingSignIn; user: User } | undefined> {
  const pending = input.sealed ? deps.pending.open(input.sealed, input.now) : undefined;
  if (!pending || !input.isBound(pending.browser) || !pending.offered.includes(input.method)) return undefined;
  const user = await deps.store.getUserById(pending.userId);
  return user && !user.disabled ? { pending, user } : undefined;
}

/**
 * What a held sign-in is offered as: the authenticator app's enrolment during a sign-in holds one
 * while the recovery codes are shown, then it goes on as it was (`advance` with no new factor).
 */
export const HELD = 'continue';
