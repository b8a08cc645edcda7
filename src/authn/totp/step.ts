// The authenticator-app step (TOTP, RFC 6238): a second factor only (RFC 8176 `otp`), asked after a
// first one of a user who enrolled an app. A code is accepted within one step of clock skew either
// way, once: its time step is stored in one conditional update (../../store/second-factors.ts), so
// the same code, or an older one, is refused afterwards, also when two requests bring it at once.
// Guesses are throttled per user and address (../second-factor.ts). Enrolment, on the account page
// or during a sign-in that needs a second factor, is ./enrolment.ts.
import type { EventStore } from '../../store/events.ts';
import type { SecondFactorStore } from '../../store/second-factors.ts';
import type { ThrottleStore } from '../../store/throttles.ts';
import type { User } from '../../store/users.ts';
import { openAtRest } from '../../tokens/at-rest.ts';
import type { Secrets } from '../../tokens/secrets.ts';
import type { Factor } from '../factor.ts';
import { checkCode, type CodeCheckDeps, type CodeVerdict } from '../second-factor.ts';
import { matchingStep, typedCode } from './code.ts';
import type { FormAttempt, Step, Verification } from '../step.ts';

export interface TotpDeps extends CodeCheckDeps {
  store: EventStore & ThrottleStore & SecondFactorStore;
  secrets: Secrets;
}

export const totpStep = {
  method: 'totp',
  first: false,
  second: true,
  factors: 1,
  phishingResistant: false,
  switchable: true,
  enrolled: (user, store) => store.hasTotp(user.id),
  verify: confirmWithTotp,
} as const satisfies Step<TotpDeps, FormAttempt, never>;

/** The factor an authenticator code gives (RFC 8176 §2: `otp`). */
export function totpFactor(at: number): Factor {
  return { method: 'totp', amr: ['otp'], at };
}

/** The user's secret, decrypted; an error when no secret of the keyring opens it (TESSERA_SECRET changed). */
export function totpSecret(secrets: Secrets, secretEnc: string): string {
  return openAtRest(secrets, 'totpSecret', secretEnc, "an authenticator app's secret");
}

/** Whether `code` is the user's current code (±1 step), never accepted before; spends its step if so. */
export async function verifyTotp(
  deps: Pick<TotpDeps, 'store' | 'secrets'>,
  user: User,
  code: string | undefined,
  now: number,
): Promise<CodeVerdict> {
  const typed = typedCode(code);
  const credential = await deps.store.getTotp(user.id);
  if (!typed || !credential) return 'wrong_code';
  const step = matchingStep(totpSecret(deps.secrets, credential.secretEnc), typed, now);
  if (step === undefined) return 'wrong_code';
  return (await deps.store.useTotpStep({ userId: user.id, step, at: now })) ? 'ok' : 'replayed';
}

/** An authenticator code (the form's `code`) as a later step of a sign-in, of the user it named. */
async function confirmWithTotp(deps: TotpDeps, attempt: FormAttempt): Promise<Verification> {
  const { user, now } = attempt;
  if (!user) return { kind: 'failed', reason: 'no_user' };
  const check = { user, method: 'totp', clientId: attempt.clientId, requester: attempt.requester, now };
  const checked = await checkCode(deps, check, () => verifyTotp(deps, user, attempt.field('code'), now));
  return checked.kind === 'ok' ? { kind: 'verified', user, factor: totpFactor(now) } : checked;
}
