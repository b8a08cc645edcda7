// Security notifications (src/mail/security.ts): the events of the types that tell a person of a change
// to their account, not yet told, with the address to tell; and the mails that tell them, each under
// its event's id, so that however many instances write one, the outbox holds it once.
import { sql } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import type { AggregateClass } from './aggregate.ts';
import { toEvent } from './events.ts';
import { fromMail, type Mail } from './mails.ts';
import type { EventRow } from './tables.ts';

/** Events of `type`, and of those only the ones whose data (JSON) holds `dataHas` and not `dataLacks`. */
export interface NoticeRule {
  type: string;
  dataHas?: string;
  dataLacks?: string;
}

export interface NoticeStore {
  /**
   * The events at or after `since` that a rule names, oldest first, whose user has a verified address
   * and that have no mail under their id yet; each with that address.
   */
  untoldEvents(input: {
    rules: readonly NoticeRule[];
    since: number;
    limit: number;
  }): Promise<Array<{ event: SecurityEvent; recipient: string }>>;
  /** Writes each mail to the outbox unless a mail of its id is there already (another instance's). */
  queueNotices(mails: Mail[]): Promise<void>;
}

/** A LIKE pattern for a fragment anywhere in the text: `%` and `_` taken literally (escaped by `\`). */
const containing = (fragment: string) => `%${fragment.replace(/[\\%_]/g, '\\$&')}%`;

/** Security notifications: the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withNotices<Base extends AggregateClass>(Base: Base) {
  abstract class Notices extends Base implements NoticeStore {
    async untoldEvents(input: {
      rules: readonly NoticeRule[];
      since: number;
      limit: number;
    }): Promise<Array<{ event: SecurityEvent; recipient: string }>> {
      if (input.rules.length === 0) return [];
      const rows = await this.db
        .selectFrom('events as e')
        .innerJoin('users as u', 'u.id', 'e.user_id')
        .selectAll('e')
        .select('u.email as recipient')
        .where('e.type', 'in', [...new Set(input.rules.map((rule) => rule.type))])
        .where('e.at', '>=', input.since)
        .where((eb) =>
          eb.or(
            input.rules.map((rule) =>
              eb.and([
                eb('e.type', '=', rule.type),
                ...(rule.dataHas ? [sql<boolean>`e.data like ${containing(rule.dataHas)} escape '\\'`] : []),
                ...(rule.dataLacks
                  ? [sql<boolean>`coalesce(e.data, '') not like ${containing(rule.dataLacks)} escape '\\'`]
                  : []),
              ]),
            ),
          ),
        )
        .where('u.email', '<>', '')
        .where('u.email_verified', '=', 1)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('mails as m').select('m.id').whereRef('m.id', '=', 'e.id'))))
        .orderBy('e.at')
        .orderBy('e.id')
        .limit(input.limit)
        .execute();
      return rows.map(({ recipient, ...row }) => ({ event: toEvent(row as EventRow), recipient }));
    }

    async queueNotices(mails: Mail[]): Promise<void> {
      if (mails.length === 0) return;
      await this.write(
        this.db
          .insertInto('mails')
          .values(mails.map(fromMail))
          .onConflict((oc) => oc.column('id').doNothing()),
      );
    }
  }
  return Notices;
}
