// The recovery-code step: a second factor for the day the user's authenticator app or passkey is
// lost. Each code works once: its use is one conditional update that also names the event recording
// it (`recovery_code.used`), so of two requests with one code exactly one signs in and one event is
// written. Guessing is throttled as authenticator codes are (../second-factor.ts). RFC 8176 names no
// method for a look-up secret, so the factor adds no amr value of its own; with the first factor the
// sign-in is still two factors (`mfa`). Codes are made with the first authenticator app and renewed
// on the account page (../recovery/).
import { securityEvent } from '../../events/index.ts';
import type { Factor } from '../factor.ts';
import { recoveryCodeHash, typedRecoveryCode } from './codes.ts';
import { checkCode, type CodeCheckDeps, type CodeVerdict } from '../second-factor.ts';
import type { FormAttempt, Step, Verification } from '../step.ts';
import type { SecondFactorStore } from '../../store/second-factors.ts';

export interface RecoveryCodeDeps extends CodeCheckDeps {
  store: CodeCheckDeps['store'] & Pick<SecondFactorStore, 'recoveryCodeSummary' | 'useRecoveryCode'>;
}

export const recoveryCodeStep = {
  method: 'recovery-code',
  first: false,
  second: true,
  factors: 1,
  phishingResistant: false,
  switchable: true,
  // Only beside a second factor that they stand in for: a user who removed theirs is not asked.
  enrolled: async (user, store) =>
    (await store.hasRecoveryCodes(user.id)) && ((await store.hasTotp(user.id)) || (await store.hasPasskeys(user.id))),
  verify: confirmWithRecoveryCode,
} as const satisfies Step<RecoveryCodeDeps, FormAttempt, never>;

export function recoveryCodeFactor(at: number): Factor {
  return { method: 'recovery-code', amr: [], at };
}

/** A recovery code (the form's `code`) as a later step of a sign-in, of the user it named. */
async function confirmWithRecoveryCode(deps: RecoveryCodeDeps, attempt: FormAttempt): Promise<Verification> {
  const { user, now, requester, clientId } = attempt;
  if (!user) return { kind: 'failed', reason: 'no_user' };
  const spend = async (): Promise<CodeVerdict> => {
    const typed = typedRecoveryCode(attempt.field('code'));
    if (!typed) return 'wrong_code';
    const left = (await deps.store.recoveryCodeSummary(user.id)).unused - 1;
    const used = securityEvent('recovery_code.used', now, {
      userId: user.id,
      clientId,
      requester,
      data: { left: Math.max(left, 0) },
    });
    const hash = recoveryCodeHash(user.id, typed);
    return (await deps.store.useRecoveryCode({ userId: user.id, hash, at: now }, used)) ? 'ok' : 'wrong_code';
  };
  const check = { user, method: 'recovery-code', clientId, requester, now };
  const checked = await checkCode(deps, check, spend);
  return checked.kind === 'ok' ? { kind: 'verified', user, factor: recoveryCodeFactor(now) } : checked;
}
