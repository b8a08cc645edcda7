// What `tessera users show` tells of a user besides their fields (whether sign-in is locked or
// delayed, the factors they can sign in with, their sessions), `users sessions USERNAME` and
// `users sign-out USERNAME [--grants]`: an operator's answers to "why can't Alice sign in", "where is
// she signed in" and "sign her out everywhere".
import { enrolledMethods } from '../../authn/registry.ts';
import type { Config } from '../../config/index.ts';
import { CLI, securityEvent } from '../../events/index.ts';
import { refusal } from '../../authn/throttle.ts';
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

/**
 * The throttling of the user's sign-ins (src/authn/throttle.ts): one entry per key counted for the
 * username, from anywhere (`account`) or from one browser the user signed in with before (`device`).
 */
async function signInLocks(store: ThrottleStore, config: Config, user: User, now: number) {
  const states = await store.getThrottlesOf(user.username.toLowerCase());
  return states.map((state) => {
    const refused = refusal([{ state, policy: config.throttle }], now);
    return {
      from: state.key.startsWith('device:')
        ? 'one known browser'
        : state.key.startsWith('second-factor:')
          ? 'codes after the password'
          : 'anywhere',
      failures: state.failures,
      last_failure_at: formatTime(state.lastFailureAt),
      state: refused ? (refused.locked ? 'locked' : 'delayed') : 'open',
      until: refused ? formatTime(now + refused.retryAfter) : null,
    };
  });
}

/** `users show`'s lines besides the user's fields. */
export async function userStatus(
  store: UserStores,
  config: Config,
  user: User,
  now: number,
): Promise<Record<string, unknown>> {
  const locks = await signInLocks(store, config, user, now);
  const locked = locks.find((l) => l.state !== 'open');
  return {
    sign_in: locked ? `${locked.state} until ${locked.until} (tessera users unlock ${user.username})` : 'open',
    sign_in_throttles: locks,
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
 * Ends every session of the user (`user.signed_out`, naming the providers linked, which still sign the
 * user in) and, with `grants`, revokes every grant (`token.revoked` for each, so each app's webhooks hear
 * of its own), in one transaction.
 */
export async function signOutEverywhere(
  store: UserStores,
  user: User,
  grants: boolean,
  now: number,
  linked: Record<string, string[]>,
): Promise<{ sessions: number; grants: number }> {
  const live = (await store.listSessionsOf(user.id, now)).length;
  const revoked = grants ? await store.listActiveGrants(user.id, now) : [];
  const data = { everywhere: true, ...linked };
  const events = [
    ...(live > 0 ? [securityEvent('user.signed_out', now, { userId: user.id, requester: CLI, data })] : []),
    ...revoked.map((grant) =>
      securityEvent('token.revoked', now, {
        userId: user.id,
        clientId: grant.clientId,
        requester: CLI,
        data: { token: 'refresh_token', grant: grant.id },
      }),
    ),
  ];
  await store.signOutEverywhere({ userId: user.id, now, revokeGrants: grants }, events);
  return { sessions: live, grants: revoked.length };
}

/**
 * The user's links to upstream providers, for what an operator's reset or sign-out says and records:
 * each still signs the user in without the password or second factor just reset, so the operator
 * helping after a compromise sees them (`users unlink` removes one).
 */
export async function upstreamLinksOf(store: UserStores, user: User) {
  const links = await store.listLinks(user.id);
  const listed = links.map((l) => `${l.providerId} (${l.subject})`).join(', ');
  // Said only when there are some: what the commands said before stays as it was.
  const line =
    links.length === 0
      ? undefined
      : `${links.length} linked provider(s) still sign ${user.username} in, without the password: ${listed}; ` +
        `"users unlink ${user.username} PROVIDER" removes one`;
  // For the event's data: the providers, one link each (nothing when there is none).
  const data: Record<string, string[]> = links.length === 0 ? {} : { linked_providers: links.map((l) => l.providerId) };
  return { data, line };
}
