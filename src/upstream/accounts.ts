// Which user an upstream person is. A person is linked to a user by (provider, subject), and only
// by that: an email never signs anyone in by itself. A person with no link yet is
//   - signed in as the one user here who has the email verified, when the provider says it verified
//     that email too and the operator trusts the provider's emails (--trust-email); the link is
//     written with the session, once the user's own second factor, if any, is given too;
//   - asked to prove the account when the email the provider verified names a user here (Keycloak's
//     "account already exists" without its pitfall: nothing is linked until they sign in to it);
//   - asked the same when the provider only links (--link-only);
//   - otherwise a new user: the username from preferred_username or the email's local part (else the
//     provider's id and the subject), made unique, the email and email_verified as the provider
//     states them (no email: none, as Keycloak allows), no password.
// An unverified email matches nobody, and says nothing of who has an account here: a person whose
// provider did not verify it becomes a user of their own, whose address names nobody (addressOwners).
import { type Requester, type SecurityEvent, securityEvent } from '../events/index.ts';
import type { Session } from '../store/sessions.ts';
import type { UpstreamLink, UpstreamProvider, UpstreamStore } from '../store/upstream.ts';
import { addressOwners, type User, type UserStore } from '../store/users.ts';
import { newId, randomToken } from '../tokens/opaque.ts';
import type { UpstreamIdentity } from './identity.ts';

/**
 * An account at an upstream provider to link to the user when, and only when, the sign-in completes:
 * the link is written with the session (src/upstream/accounts.ts), never before, so a sign-in left
 * at its second factor links nothing. `by` says what showed the account to be the user's.
 */
export interface LinkOnSignIn {
  provider: string;
  subject: string;
  email: string | null;
  by: 'sign_in' | 'verified_email';
}

export type AccountStore = UpstreamStore & Pick<UserStore, 'getUserById' | 'getUserByUsername'>;

export type Resolution =
  /**
   * The user: through their link (`link`), made now with their link (`created`), or the owner of the
   * verified email, to be linked when the sign-in completes (`email`, with `link` to write then).
   */
  | { kind: 'user'; user: User; via: 'link' | 'created' }
  | { kind: 'user'; user: User; via: 'email'; link: LinkOnSignIn }
  | { kind: 'link-needed'; reason: 'email_exists' | 'link_only'; identity: UpstreamIdentity }
  /** The user is disabled. */
  | { kind: 'refused'; reason: 'disabled'; userId: string | null };

export interface ResolveInput {
  provider: UpstreamProvider;
  identity: UpstreamIdentity;
  /** The identity with its profile (email, names): read from the provider only when needed. */
  profile: () => Promise<UpstreamIdentity>;
  requester: Requester;
  now: number;
}

const signedIn = (provider: UpstreamProvider, subject: string, userId: string, input: ResolveInput) =>
  securityEvent('user.upstream_signed_in', input.now, {
    userId,
    requester: input.requester,
    data: { provider: provider.id, subject },
  });

/** The user the upstream person is, or what must happen first (see above). */
export async function resolveAccount(store: AccountStore, input: ResolveInput): Promise<Resolution> {
  const { provider, now } = input;
  const subject = input.identity.subject;
  const link = await store.getLink(provider.id, subject);
  const linked = link && (await store.getUserById(link.userId));
  if (linked) {
    if (linked.disabled) return { kind: 'refused', reason: 'disabled', userId: linked.id };
    await store.touchLink(provider.id, subject, now, signedIn(provider, subject, linked.id, input));
    return { kind: 'user', user: linked, via: 'link' };
  }
  const identity = await input.profile();
  if (identity.email !== null && identity.emailVerified) {
    const owners = addressOwners(await store.findUsersByEmail(identity.email));
    const verified = owners.filter((u) => u.emailVerified);
    if (provider.trustEmail && verified.length === 1) {
      const [owner] = verified as [User];
      if (owner.disabled) return { kind: 'refused', reason: 'disabled', userId: owner.id };
      const link = { provider: provider.id, subject, email: identity.email, by: 'verified_email' } as const;
      return { kind: 'user', user: owner, via: 'email', link };
    }
    if (owners.length > 0) return { kind: 'link-needed', reason: 'email_exists', identity };
  }
  if (provider.linkOnly) return { kind: 'link-needed', reason: 'link_only', identity };
  return createUser(store, provider, identity, input);
}

/** Characters a username may have (src/cli/operations.ts createUser's rule). */
const USERNAME = /[^A-Za-z0-9._@+-]/g;

/**
 * The username a new user starts from: preferred_username, else the email's local part, else the
 * provider's id and the subject, cleaned.
 */
export function usernameBase(identity: UpstreamIdentity, providerId = 'user'): string {
  const fallback = `${providerId}-${identity.subject}`;
  for (const candidate of [identity.preferredUsername, identity.email?.split('@')[0], fallback]) {
    // Never starting with - or _ or . (a CLI argument must not read as an option).
    const clean = (candidate ?? '')
      .normalize('NFKC')
      .replace(USERNAME, '')
      .replace(/^[-_.]+/, '')
      .slice(0, 56);
    if (clean) return clean;
  }
  return 'user';
}

/** The first of base, base-2, base-3, … that nobody has; after twenty, base and a random suffix. */
async function freeUsername(store: Pick<UserStore, 'getUserByUsername'>, base: string): Promise<string> {
  for (let n = 1; n <= 20; n++) {
    const candidate = n === 1 ? base : `${base}-${n}`;
    if (!(await store.getUserByUsername(candidate))) return candidate;
  }
  return `${base}-${randomToken(6)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')}`;
}

/** A first sign-in: a new user without a password, and their link, in one transaction. */
async function createUser(
  store: AccountStore,
  provider: UpstreamProvider,
  identity: UpstreamIdentity,
  input: ResolveInput,
): Promise<Resolution> {
  const { now, requester } = input;
  for (let attempt = 0; ; attempt++) {
    const user: User = {
      id: newId(),
      username: await freeUsername(store, usernameBase(identity, provider.id)),
      // users.email is required; a user without one has '' and releases no email claim.
      email: identity.email ?? '',
      emailVerified: identity.emailVerified,
      name: identity.name,
      givenName: identity.givenName,
      familyName: identity.familyName,
      passwordHash: null,
      disabled: false,
      createdAt: now,
      updatedAt: now,
      roles: [],
    };
    const link = {
      providerId: provider.id,
      subject: identity.subject,
      userId: user.id,
      email: identity.email,
      createdAt: now,
      lastUsedAt: now,
    };
    const data = { provider: provider.id, subject: identity.subject };
    const events = [
      securityEvent('user.created', now, { userId: user.id, requester, data: { provider: provider.id } }),
      securityEvent('user.upstream_linked', now, {
        userId: user.id,
        requester,
        data: { ...data, by: 'first_sign_in' },
      }),
      signedIn(provider, identity.subject, user.id, input),
    ];
    try {
      await store.createUserWithLink(user, link, events);
      return { kind: 'user', user, via: 'created' };
    } catch (err) {
      // Another sign-in of the same person won the race (the link exists now), or of someone with the
      // same username: the first is that user, the second tries the next free name.
      const won = await store.getLink(provider.id, identity.subject);
      const winner = won && (await store.getUserById(won.userId));
      if (winner) return { kind: 'user', user: winner, via: 'link' };
      if (attempt >= 2) throw err;
    }
  }
}

/**
 * Links the person the provider signed in to the signed-in user: `already` when it is theirs already,
 * `linked_elsewhere` when it is another user's, `provider_taken` when the user has another account of
 * this provider linked.
 */
export async function linkToAccount(
  store: UpstreamStore,
  input: { provider: UpstreamProvider; identity: UpstreamIdentity; userId: string; requester: Requester; now: number },
): Promise<'linked' | 'already' | 'linked_elsewhere' | 'provider_taken'> {
  const { provider, identity, userId, now } = input;
  const existing = await store.getLink(provider.id, identity.subject);
  if (existing) return existing.userId === userId ? 'already' : 'linked_elsewhere';
  const link = { providerId: provider.id, subject: identity.subject, userId, email: identity.email };
  const data = { provider: provider.id, subject: identity.subject, by: 'account_page' };
  const event = securityEvent('user.upstream_linked', now, { userId, requester: input.requester, data });
  if (await store.createLink({ ...link, createdAt: now, lastUsedAt: null }, event)) return 'linked';
  const again = await store.getLink(input.provider.id, input.identity.subject);
  if (again) return again.userId === input.userId ? 'already' : 'linked_elsewhere';
  return 'provider_taken';
}

/**
 * A sign-in that links (LinkOnSignIn): the session, with `signedIn` (its event), written only with
 * the link, in one write; false, and no session, when the person or the user's provider got linked
 * meanwhile.
 */
export function startSessionWithLink(
  store: UpstreamStore,
  input: { session: Session; link: LinkOnSignIn; requester: Requester; signedIn: SecurityEvent },
): Promise<boolean> {
  const { session, link } = input;
  const now = session.createdAt;
  const row: UpstreamLink = {
    providerId: link.provider,
    subject: link.subject,
    userId: session.userId,
    email: link.email,
    createdAt: now,
    // The provider did sign the person in on the way: the link's first use.
    lastUsedAt: now,
  };
  const data = { provider: link.provider, subject: link.subject, by: link.by };
  const linked = securityEvent('user.upstream_linked', now, {
    userId: session.userId,
    requester: input.requester,
    data,
  });
  return store.createSessionWithLink(session, row, [linked, input.signedIn]);
}
