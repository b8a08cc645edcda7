// A user's passkeys on the account page: listed, added (a WebAuthn registration), renamed and removed.
// Adding and removing change how the user signs in, so they need a recent sign-in (../recent.ts), and
// a removal ends the user's other sessions; each change is an event.
import { type Requester, securityEvent } from '../../events/index.ts';
import type { EventStore } from '../../store/events.ts';
import type { Passkey, PasskeyStore } from '../../store/passkeys.ts';
import type { User } from '../../store/users.ts';
import { newSortableId } from '../../tokens/opaque.ts';
import { recentSignIn } from '../recent.ts';
import type { BrowserSession } from '../session.ts';
import { shortfall } from '../sufficiency.ts';
import { challengeUse } from './ceremony.ts';
import { type PasskeyFailure, parseRegistration, type RelyingParty } from './relying-party.ts';

export interface EnrolmentDeps {
  store: PasskeyStore & EventStore;
  relyingParty: RelyingParty;
}

/** A passkey as the account page shows it. */
export interface PasskeyListing {
  id: string;
  name: string;
  /** Epoch seconds. */
  created: number;
  /** Epoch seconds, or null when never used to sign in. */
  lastUsed: number | null;
  /** Synced to the user's other devices by their platform (backup eligible), or bound to one device. */
  synced: boolean;
  /** When it was suspended, its counter gone back (./suspension.ts); null when it signs in. */
  suspended: number | null;
}

/** A name's longest, in characters. */
export const PASSKEY_NAME_MAX = 64;

/** A passkey added without a name is named by its day (stored: the user's own data, not a page's text). */
const day = (epoch: number) => new Date(epoch * 1000).toISOString().slice(0, 10);

const listing = (p: Passkey): PasskeyListing => ({
  id: p.id,
  name: p.name,
  created: p.createdAt,
  lastUsed: p.lastUsedAt,
  synced: p.backupEligible,
  suspended: p.suspendedAt,
});

/**
 * The account page's passkeys section: the user's passkeys, and the options of a new one's registration
 * when the session may add one now (a recent sign-in), else null (the page asks to sign in again), or
 * undefined when this issuer cannot have passkeys (an IP address).
 */
export async function passkeyEnrolment(
  deps: EnrolmentDeps,
  input: { user: User; session: BrowserSession; bind: () => string; now: number },
): Promise<{ passkeys: PasskeyListing[]; registration: string | null | undefined }> {
  const { user, now } = input;
  const passkeys = await deps.store.listPasskeys(user.id);
  const recent = !shortfall(input.session, user, recentSignIn(now));
  const registration = !deps.relyingParty.usable
    ? undefined
    : recent
      ? JSON.stringify(await deps.relyingParty.registrationOptions({ user, passkeys, browser: input.bind(), now }))
      : null;
  return { passkeys: passkeys.map(listing), registration };
}

/** A name as typed: spaces collapsed, control characters dropped, at most PASSKEY_NAME_MAX characters. */
export function passkeyName(typed: string | undefined): string {
  const clean = (typed ?? '')
    .replace(/\p{Cc}/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return [...clean].slice(0, PASSKEY_NAME_MAX).join('');
}

export type AddPasskeyOutcome =
  | { kind: 'added'; id: string; name: string }
  /** The session's sign-in is not recent enough for the change: sign in again first. */
  | { kind: 'reauth' }
  | { kind: 'failed'; reason: PasskeyFailure; detail?: string };

/**
 * A new passkey from the account page's registration (WebAuthn §7.1): answering a challenge given to
 * this browser for this user while the session's sign-in was recent, made on Tessera's origin. Named
 * as typed, or "Passkey" and the day (an authenticator's model cannot be named offline).
 */
export async function addPasskey(
  deps: EnrolmentDeps,
  input: {
    user: User;
    session: BrowserSession;
    response: string | undefined;
    name: string | undefined;
    requester: Requester;
    isBound: (browser: string) => boolean;
    now: number;
  },
): Promise<AddPasskeyOutcome> {
  const { user, now, requester } = input;
  const response = parseRegistration(input.response);
  if (!response) return { kind: 'failed', reason: 'malformed' };
  const clientData = response.response.clientDataJSON;
  const opened = deps.relyingParty.openCeremony(clientData, { purpose: 'register', isBound: input.isBound, now });
  if (!opened || opened.ceremony.userId !== user.id) return { kind: 'failed', reason: 'challenge' };
  // Recent when the registration began: the browser has made the passkey by now, so it is kept.
  if (shortfall(input.session, user, recentSignIn(opened.ceremony.iat))) return { kind: 'reauth' };
  const fail = async (reason: PasskeyFailure, detail?: string): Promise<AddPasskeyOutcome> => {
    const failed = securityEvent('passkey.add_failed', now, { userId: user.id, requester, data: { reason } });
    await deps.store.recordEvent(failed);
    return { kind: 'failed', reason, ...(detail ? { detail } : {}) };
  };
  if (!(await deps.store.spendChallenge(challengeUse(opened)))) return fail('replayed');
  const verified = await deps.relyingParty.verifyRegistration({ response, opened });
  if (!verified.ok) return fail(verified.reason, verified.detail);
  const passkey: Passkey = {
    id: newSortableId(),
    userId: user.id,
    credentialId: verified.credentialId,
    publicKey: verified.publicKey,
    counter: verified.counter,
    transports: verified.transports,
    backupEligible: verified.backupEligible,
    backedUp: verified.backedUp,
    name: passkeyName(input.name) || `Passkey ${day(now)}`,
    createdAt: now,
    lastUsedAt: null,
    suspendedAt: null,
  };
  const data = { passkey: passkey.id, name: passkey.name, synced: passkey.backupEligible };
  const added = securityEvent('passkey.added', now, { userId: user.id, requester, data });
  if (!(await deps.store.addPasskey(passkey, added))) return fail('already_registered');
  return { kind: 'added', id: passkey.id, name: passkey.name };
}

/** Renames the user's passkey; false when they have no such passkey or the name is empty. */
export async function renamePasskey(
  deps: EnrolmentDeps,
  input: { user: User; id: string; name: string | undefined; requester: Requester; now: number },
): Promise<boolean> {
  const { user, now } = input;
  const name = passkeyName(input.name);
  if (!name) return false;
  const data = { passkey: input.id, name };
  const renamed = securityEvent('passkey.renamed', now, { userId: user.id, requester: input.requester, data });
  return deps.store.renamePasskey({ userId: user.id, id: input.id, name }, renamed);
}

export type RemovePasskeyOutcome =
  | { kind: 'removed'; name: string }
  | { kind: 'reauth' }
  | { kind: 'not-found' }
  /** The user has no password and no other passkey: removing it would leave no way to sign in. */
  | { kind: 'last' };

/** Removes the user's passkey (recent sign-in needed) and ends their other sessions. */
export async function removePasskey(
  deps: EnrolmentDeps,
  input: { user: User; session: BrowserSession; id: string; requester: Requester; now: number },
): Promise<RemovePasskeyOutcome> {
  const { user, now } = input;
  if (shortfall(input.session, user, recentSignIn(now))) return { kind: 'reauth' };
  const passkeys = await deps.store.listPasskeys(user.id);
  const passkey = passkeys.find((p) => p.id === input.id);
  if (!passkey) return { kind: 'not-found' };
  // Without a password, the last passkey that can sign in stays (a suspended one can always go).
  const usable = passkeys.filter((p) => p.suspendedAt === null);
  if (user.passwordHash === null && passkey.suspendedAt === null && usable.length === 1) return { kind: 'last' };
  const data = { passkey: passkey.id, name: passkey.name };
  const removed = securityEvent('passkey.removed', now, { userId: user.id, requester: input.requester, data });
  const done = await deps.store.removePasskey(
    { userId: user.id, id: passkey.id, keepSession: input.session.id },
    removed,
  );
  return done ? { kind: 'removed', name: passkey.name } : { kind: 'not-found' };
}
