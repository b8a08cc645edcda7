// The browser's sign-in session as the domain code sees it (src/http/browser.ts keeps its cookie):
// who, since when, and each factor the sign-in was made of.
import type { SecurityEvent } from '../events/index.ts';
import { newId } from '../tokens/opaque.ts';
import type { Session, SessionAndUser, SessionStore } from '../store/sessions.ts';
import type { User, UserStore } from '../store/users.ts';
import { acrOf, amrOf, lastFactorAt } from './factors.ts';
import type { Factor } from './factor.ts';
import type { AcrValue } from './levels.ts';

/** The logged-in user of the browser, if any. */
export interface BrowserSession {
  id: string;
  userId: string;
  /** When the sign-in began (its first factor); a step-up keeps it. (The ID token's auth_time is the last factor's.) */
  authTime: number;
  /** Every factor of the sign-in, with its time (a step-up adds to them). */
  factors: Factor[];
  /** The session's public id (OIDC `sid`); null for a session from before it had one. */
  sid?: string | null;
  /** The user, when it was read with the session (undefined also when the user no longer exists). */
  user?: User | undefined;
  /** The scopes consented to for a client, when they were read with the session. */
  consented?: { clientId: string; scopes: string[] };
}

/** A completed sign-in, about to become a session. */
export interface SignedIn {
  userId: string;
  authTime: number;
  factors: Factor[];
}

/** The session read with its user (Store.getSessionAndUser), and the consent to `clientId` when asked. */
export function toBrowserSession(found: SessionAndUser, clientId?: string): BrowserSession {
  const { session, user, consentedScopes } = found;
  return {
    id: session.id,
    userId: session.userId,
    authTime: session.authTime,
    factors: session.factors,
    sid: session.sid ?? null,
    user,
    ...(clientId !== undefined && consentedScopes ? { consented: { clientId, scopes: consentedScopes } } : {}),
  };
}

/**
 * How a session is stored when more is written with it, in the same write (a sign-in that links an
 * upstream account, src/upstream/accounts.ts): false when it was not stored.
 */
export type SessionWrite = (session: Session, event: SecurityEvent) => Promise<boolean>;

/**
 * Stores the session whose id is `id` (a hash of its cookie), recorded with `event`, by `write` when
 * given; undefined when that did not store it. With `sid`, the session goes on under the public id of
 * the one it replaces (the same person's sign-in again, ../http/browser.ts).
 */
export async function createSession(
  store: SessionStore,
  input: { id: string; signedIn: SignedIn; now: number; ttl: number; sid?: string | null | undefined },
  event: SecurityEvent,
  write?: SessionWrite,
): Promise<BrowserSession | undefined> {
  const { id, signedIn, now } = input;
  const { userId, authTime, factors } = signedIn;
  // The session's public id, for ID tokens and logout tokens (OIDC `sid`): random, so that it tells
  // nothing of the cookie.
  const sid = input.sid ?? newId();
  const session = { id, userId, authTime, factors, createdAt: now, expiresAt: now + input.ttl, sid };
  if (!write) await store.createSession(session, event);
  else if (!(await write(session, event))) return undefined;
  return { id, userId: signedIn.userId, authTime: signedIn.authTime, factors: signedIn.factors, sid };
}

/** The session's user: the one read with it, or from the store. */
export async function sessionUser(store: UserStore, session: BrowserSession | undefined): Promise<User | undefined> {
  if (!session) return undefined;
  return 'user' in session ? session.user : store.getUserById(session.userId);
}

/** What an ID token says of a sign-in (OIDC Core §2: auth_time and acr; RFC 8176: amr). */
export interface SignInClaims {
  /** The last factor's time, from which max_age counts too. */
  authTime: number;
  amr: readonly string[];
  acr: AcrValue | null;
}

/**
 * The claims of the factors when the request asked for no acr value, derived once per factors array:
 * a session's factors are parsed once and shared by its requests (src/store/sessions.ts), so a
 * returning user's authorization requests derive them once.
 */
const derived = new WeakMap<readonly Factor[], SignInClaims>();

/** The claims a code carries to the ID token, of the session's `factors` and the acr_values asked. */
export function signInClaims(factors: readonly Factor[], acrValues: readonly string[]): SignInClaims {
  if (acrValues.length > 0) {
    return { authTime: lastFactorAt(factors), amr: amrOf(factors), acr: acrOf(factors, acrValues) };
  }
  let claims = derived.get(factors);
  if (claims === undefined) {
    const amr = Object.freeze(amrOf(factors));
    claims = Object.freeze({ authTime: lastFactorAt(factors), amr, acr: acrOf(factors, acrValues) });
    derived.set(factors, claims);
  }
  return claims;
}
