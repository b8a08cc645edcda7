// The kinds of step a sign-in is made of, one file each beside this one. A step proves something
// about the user (a factor, ../factors.ts); the policy (../policy.ts) decides which steps a sign-in
// needs from what each step says of itself here. A new kind of step is a file exporting a `Step` (and
// the domain functions its pages call), listed in `steps()`.
import type { PasskeyStore } from '../store/passkeys.ts';
import type { SecondFactorStore } from '../store/second-factors.ts';
import type { User, UserStore } from '../store/users.ts';
import { passkeyStep } from './passkeys/step.ts';
import { passwordStep } from './password/step.ts';
import { recoveryCodeStep } from './recovery/step.ts';
import { totpStep } from './totp/step.ts';
import { upstreamMfaStep, upstreamStep } from './upstream/step.ts';

export interface Step {
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
}

/**
 * What the steps read to tell what a user has enrolled (steps to come add their stores here). Whatever
 * continues a sign-in declares its store as this (or SignInDeps['store']), so a new step's store
 * reaches it without a change there.
 */
export type EnrolmentStore = UserStore &
  Pick<PasskeyStore, 'hasPasskeys'> &
  Pick<SecondFactorStore, 'hasTotp' | 'hasRecoveryCodes'>;

/**
 * Every step, in the order a sign-in offers them. A function rather than a constant: step files use
 * the sign-in flow (../sign-in.ts), which asks for the steps, and a constant would be read before
 * the step files were.
 */
export function steps(): readonly Step[] {
  return [passwordStep, passkeyStep, upstreamStep, upstreamMfaStep, totpStep, recoveryCodeStep];
}

/** The steps the user has enrolled, by method. */
export async function enrolledMethods(
  store: EnrolmentStore,
  user: User,
  registry: readonly Step[] = steps(),
): Promise<Set<string>> {
  const enrolled = new Set<string>();
  for (const step of registry) if (await step.enrolled(user, store)) enrolled.add(step.method);
  return enrolled;
}
