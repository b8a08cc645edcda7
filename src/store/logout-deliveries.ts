// The outbox of logout tokens (OpenID Connect Back-Channel Logout 1.0, delivered by
// src/logout/delivery.ts on the outbox worker webhooks and mails share): one row per client per
// session end, written by the same write as the end (./session-ends.ts says which). The token is
// signed at each attempt, so that it is fresh.
import type { OutboxOutcome } from '../events/outbox.ts';
import { Aggregate } from './aggregate.ts';
import { columns, renamed } from './columns.ts';
import { attemptRecorded, claimEntries, dueEntries, type OutboxEntry } from './outbox.ts';
import type { LogoutDeliveryRow } from './tables.ts';

/** A logout token to post: to `uri` of `clientId`, about the user `sub` and the session `sid`. */
export interface LogoutDelivery extends OutboxEntry<'delivered'> {
  id: string;
  clientId: string;
  uri: string;
  sub: string;
  sid: string | null;
}

export interface LogoutDeliveryStore {
  /** Takes up to `limit` deliveries due at `now` for `lease` seconds (PostgreSQL: FOR UPDATE SKIP LOCKED). */
  claimLogoutDeliveries(now: number, lease: number, limit: number): Promise<LogoutDelivery[]>;
  /** Records an attempt: delivered, given up, or due again at `nextAttemptAt`. */
  recordLogoutAttempt(
    id: string,
    attempt: { attempt: number; at: number; error: string | null },
    outcome: OutboxOutcome<'delivered'>,
  ): Promise<void>;
  /** The newest first. */
  listLogoutDeliveries(limit: number): Promise<LogoutDelivery[]>;
}

const deliveryRows = renamed(
  columns<LogoutDeliveryRow>()(
    // eslint-disable-next-line max-len -- one string literal, so that its type lists the columns
    'id client_id uri sub sid status attempts retry_base next_attempt_at locked_until created_at last_error finished_at',
  ),
);
const toDelivery: (row: LogoutDeliveryRow) => LogoutDelivery = deliveryRows.to;

export class LogoutDeliveries extends Aggregate implements LogoutDeliveryStore {
  async claimLogoutDeliveries(now: number, lease: number, limit: number): Promise<LogoutDelivery[]> {
    const due = dueEntries(this.db, 'logout_deliveries', now).orderBy('next_attempt_at').limit(limit);
    const claimed = claimEntries(this.db, 'logout_deliveries', due, { now, lease, skipLocked: this.skipLocked });
    return (await this.writeRows<LogoutDeliveryRow>(claimed)).map(toDelivery);
  }

  async recordLogoutAttempt(
    id: string,
    attempt: { attempt: number; at: number; error: string | null },
    outcome: OutboxOutcome<'delivered'>,
  ): Promise<void> {
    await this.write(
      this.db.updateTable('logout_deliveries').set(attemptRecorded(attempt, outcome)).where('id', '=', id),
    );
  }

  async listLogoutDeliveries(limit: number): Promise<LogoutDelivery[]> {
    const rows = await this.db
      .selectFrom('logout_deliveries')
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toDelivery);
  }
}
