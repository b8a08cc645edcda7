// What a step of a sign-in is: what it proves about the user (a factor, ./factors.ts), what the policy
// (./policy.ts) needs to know of it to decide which steps a sign-in asks for, and how one use of it
// is verified. A step's module (a folder per factor: ./password/step.ts, ./passkeys/step.ts, …)
// imports this file and its own domain code, never the flow: a route verifies a step, then hands its
// factor to the flow's `advance()` (./flow.ts). Every step is listed once, in ./registry.ts.
import type { Requester } from '../events/index.ts';
import type { PasskeyStore } from '../store/passkeys.ts';
import type { SecondFactorStore } from '../store/second-factors.ts';
import type { User, UserStore } from '../store/users.ts';
import type { Factor } from './factor.ts';
import type { Requirement } from './requirement.ts';
import type { Refusal } from './throttle.ts';
import type { LinkOnSignIn } from '../upstream/accounts.ts';

export type { LinkOnSignIn } from '../upstream/accounts.ts';

/** A step; the list of every step (./registry.ts) knows them as `Step`, without their deps and attempt. */
export interface Step<Deps = never, Attempt = never, Other = unknown> {
  /** The name a session records of it (Factor.method), and its page's path: /login/<method>. */
  readonly method: string;
  /** It names the user, so it can begin a sign-in (a password, a passkey, an upstream provider). */
  readonly first: boolean;
  /** It proves more of a user already named, so it can follow another step (an authenticator code). */
  readonly second: boolean;
  /** Factors one use of it proves: 2 for a passkey with user verification (possession and a PIN or biometric). */
  readonly factors: 1 | 2;
  /** Bound to Tessera's origin, so a look-alike site cannot relay it (a passkey): level `phr`. */
  readonly phishingResistant: boolean;
  /** Turned off, enrolled or not, by TESSERA_MFA=off (authenticator apps, recovery codes). */
  readonly switchable?: boolean;
  /** Whether the user can use it (has enrolled it). Asked only when a sign-in decides its next step. */
  enrolled(user: User, store: EnrolmentStore): boolean | Promise<boolean>;
  /**
   * One use of it: the user it proves and the factor, or why not (throttled ones refused before
   * anything is checked). `Other` is what a step may answer besides (an upstream provider's link page).
   */
  verify(deps: Deps, attempt: Attempt): Promise<Verification | Other>;
}

/**
 * What a step that comes from outside the sign-in page says of itself (an upstream provider's
 * sign-in, a link followed from a mail): it begins a sign-in, proves one factor that is not bound to
 * Tessera's origin, and has nothing for the user to enrol.
 */
export const ARRIVING_STEP = {
  first: true,
  second: false,
  factors: 1,
  phishingResistant: false,
  enrolled: () => false,
} as const;

/** What a sign-in page posts to a step (/login/<method>), as the step reads it. */
export interface FormAttempt {
  /** A field of the step's form, by name. */
  field(name: string): string | undefined;
  /** The user the sign-in's earlier steps named; null when this step begins the sign-in. */
  user: User | null;
  /** The client the sign-in is for (events and throttling), or null. */
  clientId: string | null;
  requester: Requester;
  /** The browser's device id, when its device cookie says it signed in as `username` before. */
  knownDevice(username: string): string | undefined;
  /** Whether a sealed value was bound to this browser (src/http/browser.ts). */
  isBound(browser: string): boolean;
  now: number;
}

/** Why a step did not verify: said in events and logs, never to the person beyond "it failed". */
export interface StepFailure {
  kind: 'failed';
  reason: string;
  /** For the operator's log, never shown. */
  detail?: string;
}

export type Verification =
  | {
      kind: 'verified';
      user: User;
      factor: Factor;
      /** What the sign-in is for, as far as the step carried it itself (an upstream provider's flow, a reset link). */
      carried?: Partial<Carried>;
    }
  | StepFailure
  | { kind: 'refused'; refusal: Refusal };

/** A sign-in's purpose that travelled with a step rather than with the page that posted it. */
export interface Carried {
  need: Requirement;
  /** What to go on with once signed in (./flow.ts PendingSignIn.resume). */
  resume: string | null;
  clientId: string | null;
  /** The browser the sign-in was started in. */
  browser: string;
  /** An upstream account to link once the sign-in completes (./upstream/link.ts), never before. */
  link?: LinkOnSignIn;
}

/**
 * What the steps read to tell what a user has enrolled (steps to come add their stores here). Whatever
 * continues a sign-in declares its store as this (or SignInDeps['store']), so a new step's store
 * reaches it without a change there.
 */
export type EnrolmentStore = UserStore &
  Pick<PasskeyStore, 'hasPasskeys'> &
  Pick<SecondFactorStore, 'hasTotp' | 'hasRecoveryCodes'>;
