// The passkey step (WebAuthn): a first step that signs in without a password (the passkey names the
// user, and its PIN or biometric is required), or a later step after a password (user verification
// preferred). Either way it is phishing-resistant: the browser signs only for Tessera's own origin.
// The ceremonies and their checks are ./ceremony.ts and ./relying-party.ts; adding, renaming and
// removing passkeys is ./enrolment.ts.
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { type Requester, securityEvent } from '../../events/index.ts';
import type { ThrottleObserver } from '../throttle.ts';
import { failureReason } from '../failures.ts';
import type { EventStore } from '../../store/events.ts';
import type { Passkey, PasskeyStore } from '../../store/passkeys.ts';
import type { User, UserStore } from '../../store/users.ts';
import { challengeUse, type OpenedCeremony } from './ceremony.ts';
import { type PasskeyFailure, parseAssertion, type RelyingParty, userHandleOf } from './relying-party.ts';
import { suspendPasskey } from './suspension.ts';
import type { Factor } from '../factor.ts';
import type { FormAttempt, Step, Verification } from '../step.ts';

export interface PasskeyDeps {
  store: UserStore & PasskeyStore & EventStore;
  relyingParty: RelyingParty;
  observer?: Pick<ThrottleObserver, 'signInFailed'> | undefined;
}

export const passkeyStep = {
  method: 'passkey',
  first: true,
  second: true,
  // A passkey proves possession, and with user verification (a PIN or biometric) a second factor. It
  // signs in alone only with user verification; after a password it makes two factors either way.
  factors: 2,
  phishingResistant: true,
  enrolled: (user, store) => store.hasPasskeys(user.id),
  verify: verifyPasskey,
} as const satisfies Step<PasskeyDeps, FormAttempt, never>;

/**
 * The factor a passkey gives (RFC 8176 §2): `swk` for a synced passkey, whose key the platform can
 * copy to the user's other devices (backup eligible), `hwk` for one bound to its device or security
 * key; `user` for the test of user presence every assertion passes (the UP flag).
 */
export function passkeyFactor(backupEligible: boolean, at: number): Factor {
  return { method: 'passkey', amr: [backupEligible ? 'swk' : 'hwk', 'user'], at };
}

export interface PasskeyAttempt {
  /** The form's `response`: what the browser's WebAuthn call returned, as JSON. */
  response: string | undefined;
  /** The client the sign-in is for, if any. */
  clientId: string | null;
  requester: Requester;
  /** Whether a sealed value was bound to this browser (src/http/browser.ts). */
  isBound: (browser: string) => boolean;
  now: number;
}

/**
 * A passkey's assertion (the form's `response`): alone, it begins a sign-in and needs user
 * verification (the passkey names the user); after a first step it must be of the user that step named.
 */
async function verifyPasskey(deps: PasskeyDeps, attempt: FormAttempt): Promise<Verification> {
  const { user, now } = attempt;
  const expected = { userId: user?.id ?? null, requireUserVerification: user === null };
  const { clientId, requester, isBound } = attempt;
  const response = attempt.field('response');
  const checked = await checkAssertion(deps, { response, clientId, requester, isBound, now }, expected);
  if (checked.kind === 'failed') return checked;
  return { kind: 'verified', user: checked.user, factor: passkeyFactor(checked.backupEligible, now) };
}

type Checked = { kind: 'checked'; user: User; backupEligible: boolean } | { kind: 'failed'; reason: PasskeyFailure };

/**
 * The assertion, checked in order: a WebAuthn response, answering a challenge Tessera gave this browser
 * (for `userId`'s sign-in when given), with a passkey registered to an enabled user, never answered
 * before, not suspended, made on Tessera's origin with user verification when required, its signature
 * valid and its counter moving forward (else it is suspended). A refusal after the challenge is
 * Tessera's is recorded (`user.sign_in_failed`).
 */
async function checkAssertion(
  deps: PasskeyDeps,
  attempt: PasskeyAttempt,
  expected: { userId: string | null; requireUserVerification: boolean },
): Promise<Checked | { kind: 'failed'; reason: PasskeyFailure; detail?: string }> {
  const response = parseAssertion(attempt.response);
  if (!response) return { kind: 'failed', reason: 'malformed' };
  const { now } = attempt;
  const opened = deps.relyingParty.openCeremony(response.response.clientDataJSON, {
    purpose: 'authenticate',
    isBound: attempt.isBound,
    now,
  });
  if (!opened || opened.ceremony.userId !== expected.userId) return { kind: 'failed', reason: 'challenge' };
  const fail = async (reason: PasskeyFailure, userId: string | null, detail?: string) => {
    deps.observer?.signInFailed(failureReason(passkeyStep.method, { reason }));
    const data = { reason, method: passkeyStep.method };
    const event = { userId, clientId: attempt.clientId, requester: attempt.requester, data };
    await deps.store.recordEvent(securityEvent('user.sign_in_failed', now, event));
    return { kind: 'failed' as const, reason, ...(detail ? { detail } : {}) };
  };
  const passkey = await deps.store.getPasskeyByCredentialId(response.id);
  const user = passkey && (await deps.store.getUserById(passkey.userId));
  if (!passkey || !user || (expected.userId !== null && user.id !== expected.userId)) {
    // Of a later step, the user signing in; of a first step, nobody: the passkey names no one.
    return fail('unknown_passkey', expected.userId);
  }
  if (!(await deps.store.spendChallenge(challengeUse(opened)))) return fail('replayed', user.id);
  if (user.disabled) return fail('disabled', user.id);
  if (passkey.suspendedAt !== null) return fail('suspended', user.id);
  const verified = await verifyFor(deps.relyingParty, { response, opened, passkey, user, ...expected });
  if (!verified.ok) {
    // A valid signature with a counter gone back: a cloned authenticator (../passkeys/suspension.ts).
    if (verified.reason === 'counter') await suspendPasskey(deps.store, { ...attempt, user, passkey });
    return fail(verified.reason, user.id, verified.detail);
  }
  const use = { id: passkey.id, counter: verified.counter, backedUp: verified.backedUp, at: now };
  // The counter is written only if it still moves forward: of two uses at once with one counter, one wins.
  if (!(await deps.store.recordPasskeyUse(use))) return fail('counter', user.id, 'the counter moved meanwhile');
  return { kind: 'checked', user, backupEligible: verified.backupEligible };
}

/** The relying party's checks, and that a discoverable passkey's user handle names its user (WebAuthn §7.2 step 6). */
async function verifyFor(
  relyingParty: RelyingParty,
  input: {
    response: AuthenticationResponseJSON;
    opened: OpenedCeremony;
    passkey: Passkey;
    user: User;
    requireUserVerification: boolean;
  },
) {
  const { userHandle } = input.response.response;
  if (userHandle !== undefined && userHandle !== Buffer.from(userHandleOf(input.user)).toString('base64url')) {
    return { ok: false as const, reason: 'unknown_passkey' as const, detail: 'the user handle names another user' };
  }
  return relyingParty.verifyAssertion(input);
}
