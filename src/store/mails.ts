// Mails: the outbox (`mails`, delivered by src/mail/delivery.ts on the outbox worker webhooks share)
// and the single-use tokens of their links (`mail_tokens`, by SHA-256). A mail is written in the same
// write as what causes it, and a token's redemption in the same write as its effect (a new password,
// a verified address, a new account), each effect conditioned on that very redemption, so that of two
// redemptions at once exactly one has any effect, on SQLite and PostgreSQL alike.
import type { Compilable, ExpressionBuilder } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import type { AggregateClass } from './aggregate.ts';
import type { OutboxOutcome } from '../events/outbox.ts';
import { columns, renamed, someColumns } from './columns.ts';
import {
  type AttemptMade,
  attemptRecorded,
  claimDueEntries,
  insertEvents,
  insertEventsWhen,
  newestEntries,
  type OutboxEntry,
} from './outbox.ts';
import { OUTBOX_COLUMNS } from './outbox-row.ts';
import { rowValues } from './row-values.ts';
import type { Database, MailRow, MailTokenRow } from './tables.ts';
import { type Redemption, redemptionEffects } from './mail-redemptions.ts';
import { fromUser, type User } from './users.ts';

export type MailKind = 'reset' | 'verify' | 'invite' | 'signup' | 'email-changed' | 'security';
export type MailStatus = MailRow['status'];

/** A mail in the outbox. `messageEnc` is null once it was sent or given up. */
export interface Mail extends OutboxEntry<'sent'> {
  id: string;
  kind: MailKind;
  userId: string | null;
  recipient: string;
  messageEnc: string | null;
}

export type TokenPurpose = MailTokenRow['purpose'];

/** A link's token, by its hash. */
export interface MailToken {
  hash: string;
  purpose: TokenPurpose;
  userId: string | null;
  email: string;
  stamp: string | null;
  data: string | null;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

export type { Redemption } from './mail-redemptions.ts';

/** A mail to queue, with what is written with it (MailStore.queueMail). */
export interface QueuedMail {
  mail: Mail;
  token?: MailToken;
  newUser?: User;
  replaces?: { userId: string; purpose: TokenPurpose; now: number };
  event?: SecurityEvent;
  decoy?: boolean;
}

export interface MailStore {
  /**
   * Writes the mail to the outbox, in one write with its token, the user it is for when new, the
   * event, and the end of the user's earlier tokens of the same purpose (`replaces`, a resend).
   * `decoy`: only the event is written; the mail's and token's statements run as deletes of their
   * (new, absent) keys, so that the write costs what a real one does and changes nothing else.
   */
  queueMail(input: QueuedMail): Promise<void>;
  getMailToken(hash: string): Promise<MailToken | undefined>;
  /** The user's token of `purpose` not used and not expired at `now`, if any (an invitation pending). */
  liveMailToken(userId: string, purpose: TokenPurpose, now: number): Promise<MailToken | undefined>;
  /**
   * Uses the token (not used, not expired at `now`, of `purpose`) and does `effect` with `event` and
   * `mail`, in one write: whether the token was used and the effect made.
   */
  redeemMailToken(
    input: { hash: string; purpose: TokenPurpose; now: number; nonce: string },
    effect: Redemption,
    extras?: { event?: SecurityEvent; mail?: Mail },
  ): Promise<boolean>;
  /** Takes up to `limit` mails due at `now` for `lease` seconds (PostgreSQL: FOR UPDATE SKIP LOCKED). */
  claimMails(now: number, lease: number, limit: number): Promise<Mail[]>;
  /** Records an attempt: sent or given up (the message erased), or due again at `nextAttemptAt`. */
  recordMailAttempt(id: string, attempt: AttemptMade, outcome: OutboxOutcome<'sent'>): Promise<void>;
  /** The newest mails first. */
  listMails(limit: number): Promise<Mail[]>;
}

const mailRows = renamed(columns<MailRow>()('id kind user_id recipient message_enc', OUTBOX_COLUMNS));
const toMail = (row: MailRow): Mail => ({ ...mailRows.to(row), kind: row.kind as MailKind });
export const fromMail: (mail: Mail) => MailRow = mailRows.from;

/** A token's row but `used_by`, which only its redemption writes. */
const tokenRows = renamed(
  someColumns<MailTokenRow>()('hash purpose user_id email stamp data created_at expires_at used_at'),
);
const toToken: (row: MailTokenRow) => MailToken = tokenRows.to;

type Where<Table extends keyof Database> = ExpressionBuilder<Database, Table>;

/** Mails and their tokens: the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withMails<Base extends AggregateClass>(Base: Base) {
  abstract class Mails extends Base implements MailStore {
    async queueMail(input: QueuedMail): Promise<void> {
      const { token, replaces } = input;
      if (input.decoy) {
        const nothing = [
          ...(token ? [this.db.deleteFrom('mail_tokens').where('hash', '=', token.hash)] : []),
          this.db.deleteFrom('mails').where('id', '=', input.mail.id),
        ];
        await this.write(...nothing, ...insertEvents(this.db, [input.event]));
        return;
      }
      const statements: Compilable[] = [];
      if (input.newUser) statements.push(this.db.insertInto('users').values(fromUser(input.newUser)));
      if (replaces) {
        const live = (eb: Where<'mail_tokens'>) =>
          eb.and([
            eb('user_id', '=', replaces.userId),
            eb('purpose', '=', replaces.purpose),
            eb('used_at', 'is', null),
          ]);
        statements.push(this.db.updateTable('mail_tokens').set({ used_at: replaces.now }).where(live));
      }
      if (token) {
        const row: MailTokenRow = { ...tokenRows.from(token), used_at: null, used_by: null };
        statements.push(this.db.insertInto('mail_tokens').values(row));
      }
      statements.push(this.db.insertInto('mails').values(fromMail(input.mail)));
      await this.write(...statements, ...insertEvents(this.db, [input.event]));
    }

    async getMailToken(hash: string): Promise<MailToken | undefined> {
      const row = await this.rowWith('mail_tokens', { hash });
      return row && toToken(row);
    }

    async liveMailToken(userId: string, purpose: TokenPurpose, now: number): Promise<MailToken | undefined> {
      const row = await this.db
        .selectFrom('mail_tokens')
        .selectAll()
        .where('user_id', '=', userId)
        .where('purpose', '=', purpose)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .orderBy('created_at', 'desc')
        .executeTakeFirst();
      return row && toToken(row);
    }

    async redeemMailToken(
      input: { hash: string; purpose: TokenPurpose; now: number; nonce: string },
      effect: Redemption,
      extras: { event?: SecurityEvent; mail?: Mail } = {},
    ): Promise<boolean> {
      const { hash, now, nonce } = input;
      const used = this.db
        .updateTable('mail_tokens')
        .set({ used_at: now, used_by: nonce })
        .where('hash', '=', hash)
        .where('purpose', '=', input.purpose)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now);
      const redeemed = this.db
        .selectFrom('mail_tokens')
        .select('hash')
        .where('hash', '=', hash)
        .where('used_by', '=', nonce);
      // Each effect only with this redemption, and the event and mail only with the effect.
      const [effects, done] = redemptionEffects(this.db, effect, redeemed, input.now);
      const event = extras.event ? insertEventsWhen(this.db, extras.event, done) : [];
      const mail = extras.mail ? [this.#insertMailWhen(extras.mail, done)] : [];
      const counts = await this.writeCounts(used, ...effects, ...event, ...mail);
      return counts[0] === 1 && counts[1] === 1;
    }

    #insertMailWhen(mail: Mail, condition: Parameters<typeof insertEventsWhen>[2]) {
      const { columns, values } = rowValues(this.db, fromMail(mail));
      return this.db
        .insertInto('mails')
        .columns(columns)
        .expression(values.where((eb) => eb.exists(condition)));
    }

    async claimMails(now: number, lease: number, limit: number): Promise<Mail[]> {
      const claimed = claimDueEntries(this.db, 'mails', { now, lease, limit, skipLocked: this.skipLocked });
      return (await this.writeRows<MailRow>(claimed)).map(toMail);
    }

    async recordMailAttempt(id: string, attempt: AttemptMade, outcome: OutboxOutcome<'sent'>): Promise<void> {
      const recorded = attemptRecorded(attempt, outcome);
      // Sent or given up, its link is no longer kept anywhere.
      const set = recorded.status === 'pending' ? recorded : { ...recorded, message_enc: null };
      await this.write(this.db.updateTable('mails').set(set).where('id', '=', id));
    }

    async listMails(limit: number): Promise<Mail[]> {
      const rows = (await newestEntries(this.db, 'mails', limit).execute()) as MailRow[];
      return rows.map(toMail);
    }
  }
  return Mails;
}
