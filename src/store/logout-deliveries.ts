// The outbox of logout tokens (OpenID Connect Back-Channel Logout 1.0, delivered by
// src/logout/delivery.ts on the outbox worker webhooks and mails share): one row per client per
// session end, written by the same write as the end (./session-ends.ts says which). The token is
// signed at each attempt, so that it is fresh.
import type { OutboxOutcome } from '../events/outbox.ts';
import type { AggregateClass } from './aggregate.ts';
import { columns, renamed } from './columns.ts';
import { type AttemptMade, attemptRecorded, claimDueEntries, newestEntries, type OutboxEntry } from './outbox.ts';
import { OUTBOX_COLUMNS } from './outbox-row.ts';
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
  recordLogoutAttempt(id: string, attempt: AttemptMade, outcome: OutboxOutcome<'delivered'>): Promise<void>;
  /** The newest first. */
  listLogoutDeliveries(limit: number): Promise<LogoutDelivery[]>;
}

const deliveryRows = renamed(columns<LogoutDeliveryRow>()('id client_id uri sub sid', OUTBOX_COLUMNS));
const toDelivery: (row: LogoutDeliveryRow) => LogoutDelivery = deliveryRows.to;

/** The logout tokens' outbox: the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withLogoutDeliveries<Base extends AggregateClass>(Base: Base) {
  abstract class LogoutDeliveries extends Base implements LogoutDeliveryStore {
    async claimLogoutDeliveries(now: number, lease: number, limit: number): Promise<LogoutDelivery[]> {
      const claim = { now, lease, limit, skipLocked: this.skipLocked };
      const claimed = claimDueEntries(this.db, 'logout_deliveries', claim);
      return (await this.writeRows<LogoutDeliveryRow>(claimed)).map(toDelivery);
    }

    async recordLogoutAttempt(id: string, attempt: AttemptMade, outcome: OutboxOutcome<'delivered'>): Promise<void> {
      await this.write(
        this.db.updateTable('logout_deliveries').set(attemptRecorded(attempt, outcome)).where('id', '=', id),
      );
    }

    async listLogoutDeliveries(limit: number): Promise<LogoutDelivery[]> {
      const rows = (await newestEntries(this.db, 'logout_deliveries', limit).execute()) as LogoutDeliveryRow[];
      return rows.map(toDelivery);
    }
  }
  return LogoutDeliveries;
}
