// The one list of the steps a sign-in is made of (./step.ts), a folder each. A new kind of step is a
// folder with its step.ts, listed here; the policy (./policy.ts), the levels (./factors.ts) and the
// flow (./flow.ts) read this list, and the sign-in pages post to /login/<method> for any step in it
// that is verified from a form.
import { mailLinkStep } from './mail-link/step.ts';
import { passkeyStep } from './passkeys/step.ts';
import { passwordStep } from './password/step.ts';
import { recoveryCodeStep } from './recovery/step.ts';
import type { EnrolmentStore, FormAttempt, Step } from './step.ts';
import { totpStep } from './totp/step.ts';
import { upstreamMfaStep, upstreamStep } from './upstream/step.ts';
import type { User } from '../store/users.ts';

/** The steps whose page posts a form (/login/<method>), each verified from it. */
export const FORM_STEPS = [passwordStep, passkeyStep, totpStep, recoveryCodeStep] as const;

/** What the form steps need to verify an attempt: each one's deps, together. */
export type FormStepDeps = Parameters<typeof passwordStep.verify>[0] &
  Parameters<typeof passkeyStep.verify>[0] &
  Parameters<typeof totpStep.verify>[0] &
  Parameters<typeof recoveryCodeStep.verify>[0];

export type FormStep = Step<FormStepDeps, FormAttempt, never>;

const STEPS: readonly Step[] = [
  passwordStep,
  passkeyStep,
  upstreamStep,
  upstreamMfaStep,
  totpStep,
  recoveryCodeStep,
  mailLinkStep,
];

/** Every step, in the order a sign-in offers them. */
export function steps(): readonly Step[] {
  return STEPS;
}

/** The form step of `method`, if there is one. */
export function formStep(method: string): FormStep | undefined {
  return FORM_STEPS.find((step) => step.method === method);
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
