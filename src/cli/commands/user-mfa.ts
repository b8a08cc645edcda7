// `tessera users mfa show|reset USERNAME`: an operator's help for a user who lost their second
// factor. `show` lists the second factors (the authenticator app, passkeys, recovery codes left and
// their last use); `reset` removes the authenticator app and the recovery codes and ends every
// session of the user (src/admin/support.ts says what stays), and says what it did.
import { resetSecondFactors } from '../../admin/support.ts';
import type { User } from '../../store/users.ts';
import { argumentAndJson, formatTime, type Io, onlyArgument } from './common.ts';
import { linkedLine, type UserStores } from './user-sessions.ts';
import { UsageError } from '../operations.ts';

const at = (epoch: number | null) => (epoch === null ? null : formatTime(epoch));

export async function mfaCommand(
  store: UserStores,
  args: string[],
  io: Io,
  now: number,
  findUser: (username: string) => Promise<User>,
): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'show': {
      const { argument: username, json } = argumentAndJson(rest, 'the username');
      const user = await findUser(username);
      const totp = await store.getTotp(user.id);
      const codes = await store.recoveryCodeSummary(user.id);
      const passkeys = await store.listPasskeys(user.id);
      const shown = {
        username: user.username,
        authenticator_app: totp ? { added_at: at(totp.createdAt), last_used_at: at(totp.lastUsedAt) } : null,
        passkeys: passkeys.map((p) => ({ id: p.id, name: p.name, last_used_at: at(p.lastUsedAt) })),
        recovery_codes: { left: codes.unused, used: codes.used, last_used_at: at(codes.lastUsedAt) },
      };
      if (json) {
        io.out(JSON.stringify(shown, null, 2));
        return 0;
      }
      const app = shown.authenticator_app;
      io.out(`authenticator app  ${app ? `added ${app.added_at}, last used ${app.last_used_at ?? 'never'}` : 'none'}`);
      io.out(`passkeys           ${passkeys.length === 0 ? 'none' : passkeys.map((p) => p.name).join(', ')}`);
      const lastCode = codes.lastUsedAt === null ? '' : `, the last used ${at(codes.lastUsedAt)}`;
      io.out(`recovery codes     ${codes.unused} left, ${codes.used} used${lastCode}`);
      return 0;
    }
    case 'reset': {
      const user = await findUser(onlyArgument(rest, 'the username'));
      const done = await resetSecondFactors(store, user, { now });
      const passkeys = done.passkeysKept;
      const line = linkedLine(user, done.linked);
      const removed = [
        done.totp ? 'the authenticator app' : null,
        done.recoveryCodes > 0 ? `${done.recoveryCodes} recovery code(s)` : null,
      ].filter((part) => part !== null);
      const what = removed.length > 0 ? removed.join(' and ') : 'nothing (no app, no codes)';
      io.out(`reset ${user.username}: removed ${what}, ended ${done.sessions} session(s)`);
      if (passkeys > 0) io.out(`${passkeys} passkey(s) kept: the account page or users delete removes them`);
      if (line) io.out(line);
      return 0;
    }
    default:
      throw new UsageError(sub ? `unknown users mfa command "${sub}"` : 'users mfa needs a command: show, reset');
  }
}
