// A support person's operations on one user: unlock, disable and enable, delete, reset the second
// factors, sign out everywhere. What `tessera users …` calls, and the admin API and the console alike,
// so that they cannot drift. Each takes the user as the caller found them (by username or by id) and
// the Requester whose `actor` its event records (the command line's by default).
import { CLI, type Requester, securityEvent } from '../events/index.ts';
import type { GrantStore } from '../store/grants.ts';
import type { PasskeyStore } from '../store/passkeys.ts';
import type { SecondFactorStore } from '../store/second-factors.ts';
import type { SessionStore } from '../store/sessions.ts';
import type { ThrottleStore } from '../store/throttles.ts';
import type { UpstreamStore } from '../store/upstream.ts';
import type { User, UserStore } from '../store/users.ts';
import { NotFoundError } from './errors.ts';

export interface SupportOptions {
  now: number;
  requester?: Requester | undefined;
}

/**
 * The providers linked to the user (their ids), for what a reset or sign-out records and says: each
 * still signs the user in without the password or the second factor just reset, so whoever helps
 * after a compromise sees them (`users unlink` removes one). Empty when there is none.
 */
export async function linkedProviders(store: Pick<UpstreamStore, 'listLinks'>, user: User) {
  const links = await store.listLinks(user.id);
  // In the event's data only when there are some: the events recorded before stay as they were.
  const data: Record<string, string[]> = links.length === 0 ? {} : { linked_providers: links.map((l) => l.providerId) };
  return { links, data };
}

/**
 * Ends a lock (or the delays) of sign-ins to the account, from every device (src/authn/throttle.ts),
 * with `user.unlocked`: whether there was anything counted to forget.
 */
export async function unlockUser(
  store: Pick<ThrottleStore, 'clearThrottlesOf'>,
  user: User,
  options: SupportOptions,
): Promise<{ unlocked: boolean }> {
  const { now, requester = CLI } = options;
  const unlocked = securityEvent('user.unlocked', now, { userId: user.id, requester });
  return { unlocked: (await store.clearThrottlesOf(user.username.toLowerCase(), unlocked)) > 0 };
}

/** What disabling and enabling a user write to. */
type DisablingStore = Pick<UserStore, 'setUserDisabled'>;

/**
 * Disables the user (`user.disabled`): signed out, and refused at sign-in; their apps refused, with
 * the tokens issued to them revoked, and their webhooks paused, until `enableUser`.
 */
export async function disableUser(store: DisablingStore, user: User, options: SupportOptions): Promise<void> {
  await setDisabled(store, user, true, options);
}

/** Lets a disabled user sign in again, their apps and webhooks with them (`user.enabled`). */
export async function enableUser(store: DisablingStore, user: User, options: SupportOptions): Promise<void> {
  await setDisabled(store, user, false, options);
}

async function setDisabled(store: DisablingStore, user: User, disabled: boolean, options: SupportOptions) {
  const { now, requester = CLI } = options;
  const event = securityEvent(disabled ? 'user.disabled' : 'user.enabled', now, { userId: user.id, requester });
  const found = await store.setUserDisabled(user.id, disabled, now, event);
  if (!found) throw new NotFoundError(`no user ${user.username}`);
}

/**
 * Deletes the user (`user.deleted`), with their sessions and consents; their grants are revoked, so
 * every token ends; the apps they registered and their webhooks go too.
 */
export async function deleteUser(
  store: Pick<UserStore, 'deleteUser'>,
  user: User,
  options: SupportOptions,
): Promise<void> {
  const { now, requester = CLI } = options;
  const data = { username: user.username };
  const deleted = securityEvent('user.deleted', now, { userId: user.id, requester, data });
  if (!(await store.deleteUser(user.id, now, deleted))) throw new NotFoundError(`no user ${user.username}`);
}

/**
 * For a user who lost their second factor: the authenticator app and the recovery codes removed and
 * every session ended, in one write with `mfa.reset`. Passkeys stay, as Keycloak's reset of OTP
 * credentials leaves the others: a passkey signs in without a password and is removed on the account
 * page or with the user. The user then signs in with the password alone (with TESSERA_MFA=required,
 * enrolling a new app at once).
 */
export async function resetSecondFactors(
  store: Pick<SecondFactorStore, 'resetSecondFactors'> &
    Pick<PasskeyStore, 'listPasskeys'> &
    Pick<UpstreamStore, 'listLinks'>,
  user: User,
  options: SupportOptions,
): Promise<{ totp: boolean; recoveryCodes: number; sessions: number; passkeysKept: number; linked: string[] }> {
  const { now, requester = CLI } = options;
  const { links, data } = await linkedProviders(store, user);
  const reset = securityEvent('mfa.reset', now, {
    userId: user.id,
    requester,
    data: { username: user.username, ...data },
  });
  const done = await store.resetSecondFactors(user.id, reset);
  const passkeysKept = (await store.listPasskeys(user.id)).length;
  return { ...done, passkeysKept, linked: links.map((l) => `${l.providerId} (${l.subject})`) };
}

/**
 * Ends every session of the user (`user.signed_out`, naming the providers linked, which still sign the
 * user in) and, with `grants` (the default), revokes every grant (`token.revoked` for each, so each
 * app's webhooks hear of its own): refresh tokens stop and access tokens turn inactive, as after a
 * stolen laptop or a suspected compromise. One transaction. Consents are kept.
 */
export async function signOutEverywhere(
  store: Pick<SessionStore, 'listSessionsOf' | 'signOutEverywhere'> &
    Pick<GrantStore, 'listActiveGrants'> &
    Pick<UpstreamStore, 'listLinks'>,
  user: User,
  options: SupportOptions & { grants?: boolean },
): Promise<{ sessions: number; grants: number; linked: string[] }> {
  const { now, requester = CLI, grants = true } = options;
  const { links, data } = await linkedProviders(store, user);
  const live = (await store.listSessionsOf(user.id, now)).length;
  const revoked = grants ? await store.listActiveGrants(user.id, now) : [];
  const signedOut = { everywhere: true, ...data };
  const events = [
    ...(live > 0 ? [securityEvent('user.signed_out', now, { userId: user.id, requester, data: signedOut })] : []),
    ...revoked.map((grant) =>
      securityEvent('token.revoked', now, {
        userId: user.id,
        clientId: grant.clientId,
        requester,
        data: { token: 'refresh_token', grant: grant.id },
      }),
    ),
  ];
  await store.signOutEverywhere({ userId: user.id, now, revokeGrants: grants }, events);
  return { sessions: live, grants: revoked.length, linked: links.map((l) => `${l.providerId} (${l.subject})`) };
}
