// `tessera users …`: create, update, list, show, set passwords of, disable, unlock and sign out users.
import { passwordProblem } from '../../authn/password/rules.ts';
import { CLI, securityEvent } from '../../events/index.ts';
import type { Config } from '../../config/index.ts';
import type { Passkey } from '../../store/passkeys.ts';
import type { UpstreamLink } from '../../store/upstream.ts';
import { ADMIN_ROLE, type User } from '../../store/users.ts';
import { hashPassword } from '../../authn/password/hash.ts';
import { UsageError } from '../operations.ts';
import { createUser } from '../../admin/new-user.ts';
import { found } from '../../admin/errors.ts';
import { findUser } from '../../admin/users.ts';
import {
  argumentAndJson,
  flags,
  formatTime,
  type Io,
  JSON_OPTION,
  onlyArgument,
  parse,
  printList,
  readPassword,
  requireOption,
  requirePositional,
  strings,
} from './common.ts';
import { inviteCommand } from './invite.ts';
import { PAGE_OPTIONS, signOutOneSession, updateCommand, USER_OPTIONS, userPage } from './user-profile.ts';
import { mfaCommand } from './user-mfa.ts';
import { claimChanges } from './user-claims.ts';
import { describeSessions, linkedLine, upstreamLinksOf, type UserStores, userStatus } from './user-sessions.ts';
import { deleteUser, disableUser, enableUser, signOutEverywhere, unlockUser } from '../../admin/support.ts';
import type { ClientStore } from '../../store/clients.ts';
import type { WebhookStore } from '../../store/webhooks.ts';

function describe(user: User): Record<string, unknown> {
  const { id, username, email, emailVerified, name, disabled, passwordHash, createdAt } = user;
  return {
    id,
    username,
    email,
    email_verified: emailVerified,
    name,
    disabled,
    roles: user.roles,
    has_password: passwordHash !== null,
    created_at: formatTime(createdAt),
  };
}

/** A passkey as `users show` lists it (no key material: the public key is no business of the operator's). */
function describePasskey(p: Passkey): Record<string, unknown> {
  const lastUsed = p.lastUsedAt === null ? null : formatTime(p.lastUsedAt);
  return {
    id: p.id,
    name: p.name,
    created_at: formatTime(p.createdAt),
    last_used_at: lastUsed,
    synced: p.backupEligible,
    suspended_at: p.suspendedAt === null ? null : formatTime(p.suspendedAt),
  };
}

/** A link to a person at an upstream provider, as `users show` lists it. */
function describeLink(l: UpstreamLink): {
  provider: string;
  subject: string;
  linked_at: string;
  last_used_at: string | null;
} {
  return {
    provider: l.providerId,
    subject: l.subject,
    linked_at: formatTime(l.createdAt),
    last_used_at: l.lastUsedAt === null ? null : formatTime(l.lastUsedAt),
  };
}

/** The password from standard input, refused with the rule it breaks (src/authn/password/rules.ts). */
async function newPassword(io: Io, config: Config, username: string): Promise<string> {
  const password = await readPassword(io);
  const problem = passwordProblem(password, { minLength: config.passwordMinLength, username });
  if (problem) throw new UsageError(problem);
  return password;
}

/** What `users` reads and writes; a user's apps and webhooks, to say what disabling them stops. */
type UsersCommandStore = UserStores & Pick<ClientStore, 'listClientsOwnedBy'> & Pick<WebhookStore, 'listWebhooks'>;

export async function usersCommand(store: UsersCommandStore, config: Config, args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  const now = Math.floor(Date.now() / 1000);
  /** The user of a command that takes their username and nothing else. */
  const onlyUser = async () => findUser(store, onlyArgument(rest, 'the username'));
  switch (sub) {
    case 'create': {
      const { values } = parse(rest, { ...USER_OPTIONS, ...flags('password-stdin') });
      const [username, email] = [requireOption(values.username, '--username'), requireOption(values.email, '--email')];
      // The operator's word that the address is the user's; else a link must confirm it (docs/mail.md).
      const emailVerified = values['email-verified'] ?? false;
      const passwordHash = values['password-stdin']
        ? await hashPassword(await newPassword(io, config, username))
        : null;
      const names = { name: values.name, givenName: values['given-name'], familyName: values['family-name'] };
      const roles = [...(values.role ?? []), ...(values.admin ? [ADMIN_ROLE] : [])];
      const claims = claimChanges(values);
      const fields = { username, email, emailVerified, ...names, passwordHash, roles, claims };
      const user = await createUser(store, config, fields);
      const given = user.roles.length > 0 ? ` with roles ${user.roles.join(' ')}` : '';
      io.out(`created user ${user.username} (${user.id})${given}`);
      if (!passwordHash) io.out('The user has no password and cannot sign in until "users set-password" sets one.');
      return 0;
    }
    case 'list': {
      const { values } = parse(rest, { ...JSON_OPTION, ...PAGE_OPTIONS });
      const { users, nextCursor, paged } = await userPage(store, values);
      const line = (u: User) => {
        const roles = u.roles.length > 0 ? `  [${u.roles.join(' ')}]` : '';
        return `${u.id}  ${u.username.padEnd(20)}  ${u.email}${roles}${u.disabled ? '  (disabled)' : ''}`;
      };
      // A page says where the next begins; the whole list stays a plain array, as it always was.
      if (values.json && paged)
        io.out(JSON.stringify({ users: users.map(describe), next_cursor: nextCursor }, null, 2));
      else
        printList(
          io,
          values.json,
          users,
          describe,
          values.search ? `no users match "${values.search}"` : 'no users',
          line,
        );
      if (!values.json && nextCursor) io.out(`more: --cursor ${nextCursor}`);
      return 0;
    }
    case 'update':
      return updateCommand(store, rest, io, now);
    case 'set-password': {
      const { values, positionals } = parse(rest, flags('password-stdin'), 1);
      const user = await findUser(store, requirePositional(positionals, 'the username'));
      if (!values['password-stdin'])
        throw new UsageError('set-password reads the password from standard input: add --password-stdin');
      const { data, line } = await upstreamLinksOf(store, user);
      const changed = securityEvent('user.password_changed', now, { userId: user.id, requester: CLI, data });
      const hash = await hashPassword(await newPassword(io, config, user.username));
      await store.setUserPassword(user.id, hash, now, changed);
      io.out(`password set for ${user.username}`);
      if (line) io.out(line);
      return 0;
    }
    case 'disable': {
      const user = await onlyUser();
      await disableUser(store, user, { now });
      // What acts for them stops too until `users enable` (docs/cli.md): said, so nobody is surprised.
      const apps = (await store.listClientsOwnedBy(user.id)).length;
      const webhooks = (await store.listWebhooks(user.id)).length;
      io.out(
        `disabled ${user.username}: signed out; their ${apps} app(s) refused, with the tokens issued to them ` +
          `revoked, and their ${webhooks} webhook(s) paused, until enabled again`,
      );
      return 0;
    }
    case 'invite':
      return inviteCommand(store, config, rest, io, now);
    case 'show': {
      const { argument: username, json } = argumentAndJson(rest, 'the username');
      const user = await findUser(store, username);
      const passkeys = (await store.listPasskeys(user.id)).map(describePasskey);
      const linked = (await store.listLinks(user.id)).map(describeLink);
      const invitation = await store.liveMailToken(user.id, 'invite', now);
      const described: Record<string, unknown> = {
        ...describe(user),
        invitation: invitation ? `pending until ${formatTime(invitation.expiresAt)}` : 'none',
        ...(await userStatus(store, config, user, now)),
      };
      if (json) {
        io.out(JSON.stringify({ ...described, passkeys, linked_providers: linked }, null, 2));
        return 0;
      }
      const { sign_in_throttles: throttles, ...fields } = described;
      for (const [key, value] of Object.entries(fields))
        io.out(`${key.padEnd(14)} ${Array.isArray(value) ? value.join(' ') || '(none)' : String(value)}`);
      for (const t of throttles as Array<Record<string, unknown>>)
        io.out(`  failed sign-ins from ${t.from}: ${t.failures}, the last at ${t.last_failure_at} (${t.state})`);
      io.out(`${'passkeys'.padEnd(14)} ${passkeys.length === 0 ? 'none' : passkeys.length}`);
      for (const p of passkeys) {
        const used = p.last_used_at === null ? 'not used yet' : `last used ${String(p.last_used_at)}`;
        const kind = p.synced ? 'synced' : 'device-bound';
        const suspended = p.suspended_at === null ? '' : `, suspended ${String(p.suspended_at)}: its counter went back`;
        io.out(`  ${String(p.id)}  ${String(p.name)}  (added ${String(p.created_at)}, ${used}, ${kind}${suspended})`);
      }
      io.out(`${'providers'.padEnd(14)} ${linked.length === 0 ? 'none' : linked.length}`);
      for (const l of linked) {
        const used = l.last_used_at === null ? 'not used yet' : `last used ${l.last_used_at}`;
        io.out(`  ${l.provider}  ${l.subject}  (linked ${l.linked_at}, ${used})`);
      }
      return 0;
    }
    case 'sessions': {
      const { argument: username, json } = argumentAndJson(rest, 'the username');
      const user = await findUser(store, username);
      const sessions = await describeSessions(store, user, now);
      printList(
        io,
        json,
        sessions,
        (s) => s,
        `${user.username} is signed in nowhere`,
        (s) => {
          const from = [s.ip, s.user_agent].filter((v) => v !== null).join('  ');
          return `${s.session}  ${s.signed_in_at}  ${s.factors.join('+')}  until ${s.expires_at}  ${from}`;
        },
      );
      return 0;
    }
    case 'sign-out': {
      // Every session ends; with --grants, every application loses its access too (refresh tokens
      // stop, access tokens turn inactive), as after a stolen laptop or a suspected compromise.
      // With --session, that one session only (as signing out in that browser).
      const { values, positionals } = parse(rest, { ...flags('grants'), ...strings('session') }, 1);
      if (values.session !== undefined) return signOutOneSession(store, positionals, values, io, now);
      const user = await findUser(store, requirePositional(positionals, 'the username'));
      const ended = await signOutEverywhere(store, user, { now, grants: values.grants ?? false });
      const line = linkedLine(user, ended.linked);
      const sessions = `${ended.sessions} session${ended.sessions === 1 ? '' : 's'}`;
      const grants = values.grants
        ? `${ended.grants} grant(s) revoked`
        : 'applications keep their access (add --grants to revoke it)';
      io.out(`signed ${user.username} out: ${sessions} ended, ${grants}`);
      if (line) io.out(line);
      return 0;
    }
    case 'unlink': {
      // An account at an upstream provider no longer signs the user in; also the user's last way in
      // (the account page refuses that one: the operator can set a password after).
      const { positionals } = parse(rest, {}, 2);
      const user = await findUser(store, requirePositional(positionals, 'the username'));
      const providerId = requirePositional(positionals.slice(1), 'the provider');
      const linked = (await store.listLinks(user.id)).find((l) => l.providerId === providerId);
      const link = found(linked, `${user.username} has no account of ${providerId} linked`);
      const data = { provider: link.providerId, subject: link.subject, by: 'operator' };
      const unlinked = securityEvent('user.upstream_unlinked', now, { userId: user.id, requester: CLI, data });
      await store.deleteLink(link.providerId, user.id, unlinked);
      io.out(`unlinked ${providerId} (${link.subject}) from ${user.username}`);
      return 0;
    }
    case 'delete': {
      const user = await onlyUser();
      await deleteUser(store, user, { now });
      io.out(`deleted ${user.username}`);
      return 0;
    }
    case 'enable': {
      const user = await onlyUser();
      await enableUser(store, user, { now });
      io.out(`enabled ${user.username}`);
      return 0;
    }
    case 'unlock': {
      const user = await onlyUser();
      const { unlocked } = await unlockUser(store, user, { now });
      io.out(unlocked ? `unlocked ${user.username}` : `${user.username} was not locked`);
      return 0;
    }
    case 'mfa':
      return mfaCommand(store, rest, io, now, (username) => findUser(store, username));
    default:
      throw new UsageError(
        sub
          ? `unknown users command "${sub}"`
          : 'users needs a command: create, update, list, show, sessions, sign-out, set-password, disable, ' +
              'enable, delete, unlock, unlink, mfa',
      );
  }
}
