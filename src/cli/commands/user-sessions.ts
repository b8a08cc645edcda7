// What `tessera users show` tells of a user besides their fields (whether sign-in is locked or
// delayed, the factors they can sign in with, their sessions), `users sessions USERNAME` and
// `users sign-out USERNAME [--grants]`: an operator's answers to "why can't Alice sign in", "where is
// she signed in" and "sign her out everywhere".
import { enrolledMethods } from '../../authn/registry.ts';
import type { Config } from '../../config/index.ts';
import { linkedProviders } from '../../admin/support.ts';
import { lockInForce, signInLocks } from '../../admin/sign-in-locks.ts';
import type { EventStore } from '../../store/events.ts';
import type { GrantStore } from '../../store/grants.ts';
import type { MailStore } from '../../store/mails.ts';
import type { UpstreamStore } from '../../store/upstream.ts';
import type { PasskeyStore } from '../../store/passkeys.ts';
import type { SecondFactorStore } from '../../store/second-factors.ts';
import type { Session, SessionStore } from '../../store/sessions.ts';
import type { ThrottleStore } from '../../store/throttles.ts';
import type { User, UserStore } from '../../store/users.ts';
import { formatTime } from './common.ts';

export type UserStores = UserStore &
  ThrottleStore &
  SessionStore &
  GrantStore &
  EventStore &
  Pick<PasskeyStore, 'listPasskeys' | 'hasPasskeys'> &
  MailStore &
  Pick<UpstreamStore, 'findUsersByEmail' | 'listLinks' | 'deleteLink'> &
  SecondFactorStore;

/** `users show`'s lines besides the user's fields. */
export async function userStatus(
  store: UserStores,
  config: Config,
  user: User,
  now: number,
): Promise<Record<string, unknown>> {
  const locks = await signInLocks(store, config.throttle, user, now);
  const locked = lockInForce(locks);
  return {
    sign_in: locked
      ? `${locked.state} until ${formatTime(locked.until!)} (tessera users unlock ${user.username})`
      : 'open',
    sign_in_throttles: locks.map((lock) => ({
      from: lock.from,
      failures: lock.failures,
      last_failure_at: formatTime(lock.lastFailureAt),
      state: lock.state,
      until: lock.until === null ? null : formatTime(lock.until),
    })),
    // The steps the user can sign in with (src/authn/registry.ts): a password, passkeys, an authenticator
    // app (totp), recovery codes.
    factors: [...(await enrolledMethods(store, user))],
    sessions: (await store.listSessionsOf(user.id, now)).length,
  };
}

/** The user's live sessions, each with the address and browser of the sign-in that began it. */
export async function describeSessions(store: UserStores, user: User, now: number) {
  const sessions = await store.listSessionsOf(user.id, now);
  const oldest = sessions.at(-1)?.createdAt;
  const signIns =
    oldest === undefined
      ? []
      : await store.listEvents({ userId: user.id, type: 'user.signed_in', since: oldest, limit: 1000 });
  return sessions.map((session: Session) => {
    const signIn = signIns.find((event) => event.at === session.createdAt);
    return {
      // A prefix of the session's id, the SHA-256 of its cookie: names it, and opens nothing.
      session: session.id.slice(0, 12),
      signed_in_at: formatTime(session.createdAt),
      factors: session.factors.map((f) => f.method),
      last_factor_at: formatTime(Math.max(session.authTime, ...session.factors.map((f) => f.at))),
      expires_at: formatTime(session.expiresAt),
      ip: signIn?.ip ?? null,
      user_agent: signIn?.userAgent ?? null,
    };
  });
}

/**
 * The user's links to upstream providers, for what an operator's reset or sign-out says and records:
 * each still signs the user in without the password or second factor just reset, so the operator
 * helping after a compromise sees them (`users unlink` removes one).
 */
export async function upstreamLinksOf(store: UserStores, user: User) {
  const { links, data } = await linkedProviders(store, user);
  return {
    data,
    line: linkedLine(
      user,
      links.map((l) => `${l.providerId} (${l.subject})`),
    ),
  };
}

/** What the CLI says of the providers still linked after a reset or a sign-out; nothing when none. */
export function linkedLine(user: User, linked: string[]): string | undefined {
  return linked.length === 0
    ? undefined
    : `${linked.length} linked provider(s) still sign ${user.username} in, without the password: ` +
        `${linked.join(', ')}; ` +
        `"users unlink ${user.username} PROVIDER" removes one`;
}
