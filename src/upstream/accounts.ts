// Which user an upstream person is. A person is linked to a user by (provider, subject), and only
// by that: an email never signs anyone in by itself. A person with no link yet is
//   - linked to the one user here with the same email when the provider says it verified that email,
//     the user's is verified too, and the operator trusts the provider's emails (--trust-email);
//   - asked to prove the account when a user here has the email the provider verified (Keycloak's
//     "account already exists" without its pitfall: nothing is linked until they sign in to it);
//   - asked the same when the provider only links (--link-only);
//   - otherwise a new user: the username from preferred_username or the email's local part (else the
//     provider's id and the subject), made unique, the email and email_verified as the provider
//     states them (no email: none, as Keycloak allows), no password.
// An unverified email matches nobody, and says nothing of who has an account here: a person whose
// provider did not verify it becomes a user of their own.
import { type Requester, securityEvent } from '../events/index.ts';
import type { UpstreamLink, UpstreamProvider, UpstreamStore } from '../store/upstream.ts';
import type { User, UserStore } from '../store/users.ts';
import { newId, randomToken } from '../tokens/opaque.ts';
import type { UpstreamIdentity } from './identity.ts';

export type AccountStore = UpstreamStore & Pick<UserStore, 'getUserById' | 'getUserByUsername'>;

export type Resolution =
  | { kind: 'user'; user: User; created: boolean }
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
    return { kind: 'user', user: linked, created: false };
  }
  const identity = await input.profile();
  if (identity.email !== null && identity.emailVerified) {
    const owners = await store.findUsersByEmail(identity.email);
    const verified = owners.filter((u) => u.emailVerified);
    if (provider.trustEmail && verified.length === 1 && owners.length === 1) {
      const [owner] = verified as [User];
      if (owner.disabled) return { kind: 'refused', reason: 'disabled', userId: owner.id };
      const by = 'verified_email';
      const made = await linkUser(store, { provider, identity, userId: owner.id, by, requester: input.requester, now });
      if (made) {
        await store.touchLink(provider.id, subject, now, signedIn(provider, subject, owner.id, input));
        return { kind: 'user', user: owner, created: false };
      }
    }
    if (owners.length > 0) return { kind: 'link-needed', reason: 'email_exists', identity };
  }
  if (provider.linkOnly) return { kind: 'link-needed', reason: 'link_only', identity };
  return createUser(store, provider, identity, input);
}

/**
 * Links the person to `userId`, recorded as `user.upstream_linked` with how (`by`); false when the
 * person is linked already, or the user has an account of this provider linked already.
 */
export function linkUser(
  store: UpstreamStore,
  input: {
    provider: UpstreamProvider;
    identity: UpstreamIdentity;
    userId: string;
    by: 'verified_email' | 'sign_in' | 'account_page';
    requester: Requester;
    now: number;
  },
): Promise<boolean> {
  const { provider, identity, userId, now } = input;
  const link: UpstreamLink = {
    providerId: provider.id,
    subject: identity.subject,
    userId,
    email: identity.email,
    createdAt: now,
    lastUsedAt: null,
  };
  const data = { provider: provider.id, subject: identity.subject, by: input.by };
  return store.createLink(
    link,
    securityEvent('user.upstream_linked', now, { userId, requester: input.requester, data }),
  );
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
      return { kind: 'user', user, created: true };
    } catch (err) {
      // Another sign-in of the same person won the race (the link exists now), or of someone with the
      // same username: the first is that user, the second tries the next free name.
      const won = await store.getLink(provider.id, identity.subject);
      const winner = won && (await store.getUserById(won.userId));
      if (winner) return { kind: 'user', user: winner, created: false };
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
  const existing = await store.getLink(input.provider.id, input.identity.subject);
  if (existing) return existing.userId === input.userId ? 'already' : 'linked_elsewhere';
  if (await linkUser(store, { ...input, by: 'account_page' })) return 'linked';
  const again = await store.getLink(input.provider.id, input.identity.subject);
  if (again) return again.userId === input.userId ? 'already' : 'linked_elsewhere';
  return 'provider_taken';
}
