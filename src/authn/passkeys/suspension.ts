// A passkey whose signature counter went back (W3C WebAuthn §6.1.1, §7.2 step 21): its authenticator
// has likely been cloned, and one of the copies is in someone else's hands. The passkey is suspended:
// refused from then on, whichever copy signs, and no longer a step the user has (the policy asks for
// their other factors, as if it were removed); the account page shows it suspended until its user
// removes it (and adds the authenticator again if it was a false alarm: a new credential). Nobody
// can re-enable it: a clone cannot be told from the original. `passkey.suspended` is recorded once,
// and is what tells the person (src/events: the security mails and webhooks are keyed on it).
import { type Requester, securityEvent } from '../../events/index.ts';
import type { Passkey, PasskeyStore } from '../../store/passkeys.ts';
import type { User } from '../../store/users.ts';

/**
 * WebAuthn §6.1.1, §7.2 step 21 (Level 3: 22): with a stored counter that is not 0, a received one less
 * than or equal to it signals a cloned authenticator. An authenticator that keeps no counter sends 0
 * every time, which is no signal while the stored counter is 0 too.
 */
export function counterWentBack(stored: number, received: number): boolean {
  return (stored > 0 || received > 0) && received <= stored;
}

/** Suspends the passkey, recording `passkey.suspended`; false when it was suspended already. */
export function suspendPasskey(
  store: Pick<PasskeyStore, 'suspendPasskey'>,
  input: { user: User; passkey: Passkey; clientId: string | null; requester: Requester; now: number },
): Promise<boolean> {
  const { user, passkey, now } = input;
  const data = { passkey: passkey.id, name: passkey.name };
  const event = securityEvent('passkey.suspended', now, {
    userId: user.id,
    clientId: input.clientId,
    requester: input.requester,
    data,
  });
  return store.suspendPasskey({ userId: user.id, id: passkey.id, at: now }, event);
}
