// `tessera mail list [--limit N] [--json]`: the recent mails of the outbox and what became of each
// (pending, sent, failed), with the last error. Never a message or its link: the outbox keeps those
// encrypted, and only until the mail is sent.
import type { Config } from '../../config/index.ts';
import type { Mail, MailStore } from '../../store/mails.ts';
import { UsageError } from '../operations.ts';
import { describeSchedule } from '../../admin/schedule.ts';
import { type Io, JSON_OPTION, parse, printList, strings } from './common.ts';

function describeMail(mail: Mail): Record<string, unknown> {
  return { id: mail.id, kind: mail.kind, to: mail.recipient, ...describeSchedule(mail), last_error: mail.lastError };
}

export async function mailCommand(store: MailStore, config: Config, args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'list') throw new UsageError('mail: list [--limit N] [--json]');
  const { values } = parse(rest, { ...strings('limit'), ...JSON_OPTION });
  const limit = values.limit === undefined ? 20 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit: 1 to 1000');
  const mails = (await store.listMails(limit)).map(describeMail);
  if (!values.json && config.mail.mode === 'off') io.out('(mail is off: TESSERA_SMTP_URL is not set)');
  printList(
    io,
    values.json,
    mails,
    (m) => m,
    'no mails',
    (m) => {
      const when = m.status === 'pending' ? `next attempt ${String(m.next_attempt_at)}` : String(m.finished_at);
      const error = m.last_error ? `  (${String(m.last_error)})` : '';
      const state = `${String(m.status)}, ${String(m.attempts)} attempt(s), ${when}${error}`;
      return `${String(m.id)}  ${String(m.created_at)}  ${String(m.kind).padEnd(13)} ${String(m.to)}  ${state}`;
    },
  );
  return 0;
}
