// New recovery codes from the account page: the old ones stop working and ten new ones are shown
// once. Like every change to how a user signs in, it needs a recent sign-in (../recent.ts); it needs
// a second factor too (an authenticator app or a passkey), which the codes stand in for.
import { type Requester, securityEvent } from '../../events/index.ts';
import type { EventStore } from '../../store/events.ts';
import type { PasskeyStore } from '../../store/passkeys.ts';
import type { SecondFactorStore } from '../../store/second-factors.ts';
import type { User } from '../../store/users.ts';
import { recentSignIn } from '../recent.ts';
import type { BrowserSession } from '../session.ts';
import { shortfall } from '../sufficiency.ts';
import { newRecoveryCodes, recoveryCodeHash } from './codes.ts';

export type RenewOutcome = { kind: 'renewed'; codes: string[] } | { kind: 'reauth' } | { kind: 'no-second-factor' };

export async function renewRecoveryCodes(
  store: SecondFactorStore & Pick<PasskeyStore, 'hasPasskeys'> & EventStore,
  input: { user: User; session: BrowserSession; requester: Requester; now: number },
): Promise<RenewOutcome> {
  const { user, now } = input;
  if (shortfall(input.session, user, recentSignIn(now))) return { kind: 'reauth' };
  if (!(await store.hasTotp(user.id)) && !(await store.hasPasskeys(user.id))) return { kind: 'no-second-factor' };
  const codes = newRecoveryCodes();
  const hashes = codes.map((code) => recoveryCodeHash(user.id, code));
  const created = securityEvent('recovery_codes.created', now, {
    userId: user.id,
    requester: input.requester,
    data: { count: codes.length },
  });
  await store.replaceRecoveryCodes({ userId: user.id, hashes, now }, created);
  return { kind: 'renewed', codes };
}
