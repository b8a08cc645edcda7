// The account page's authenticator app and recovery codes: what the section shows (the app and its
// last use, a new secret to add when the sign-in is recent enough, the codes left and when one was
// last used), from src/authn/totp/enrolment.ts and the store.
import { recentSignIn } from '../authn/recent.ts';
import type { BrowserSession } from '../authn/session.ts';
import { shortfall } from '../authn/sufficiency.ts';
import { type TotpEnrolmentDeps, totpOffer } from '../authn/totp/enrolment.ts';
import type { User } from '../store/users.ts';
import type { SecondFactorsSection } from '../ui/second-factors.ts';

export async function secondFactorOverview(
  deps: TotpEnrolmentDeps,
  input: { user: User; session: BrowserSession; bind: () => string; now: number },
): Promise<SecondFactorsSection> {
  const { user, now } = input;
  const totp = await deps.store.getTotp(user.id);
  const recent = !shortfall(input.session, user, recentSignIn(now));
  const offer = !totp && recent ? await totpOffer(deps, input) : null;
  const codes = await deps.store.recoveryCodeSummary(user.id);
  return {
    app: totp ? { since: totp.createdAt, lastUsed: totp.lastUsedAt } : null,
    offer,
    recoveryCodes: codes,
    canHaveCodes: totp !== undefined || (await deps.store.hasPasskeys(user.id)),
  };
}
