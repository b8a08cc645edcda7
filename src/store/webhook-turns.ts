// Which of the webhook outbox's deliveries a claim takes (./webhooks.ts claimDeliveries): those of one
// lane, round the webhooks, no more of one than it may have under way. Across instances, as what is
// under way is counted from the leases in the table.
import { type Kysely, sql } from 'kysely';
import type { Database } from './tables.ts';

/**
 * Which deliveries a claim takes. `operator`: those of the operator's webhooks (made with the CLI,
 * no owner), else those of users' webhooks whose owner is not disabled: each lane is claimed by a
 * worker of its own (src/webhooks/lanes.ts), so users' receivers never hold up the operator's.
 * Within a lane the claim goes round the webhooks, first due first, one delivery of each before a
 * second of any, and takes none of a webhook that has `perWebhook` deliveries leased already (by any
 * instance), nor of the webhooks `skip` (whose receiver host is busy on this instance).
 */
export interface LaneClaim {
  operator: boolean;
  perWebhook: number;
  skip?: readonly string[];
}

/**
 * The lane's next `limit` deliveries due, round the webhooks: each one's due deliveries numbered
 * (`turn`) from its first due, the first of every webhook before the second of any, and a webhook
 * with `leased` deliveries under way given `perWebhook - leased` turns at most.
 */
export function deliveriesInTurn(db: Kysely<Database>, now: number, limit: number, lane: LaneClaim) {
  const { perWebhook, skip = [] } = lane;
  let due = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .select(['d.id', 'd.webhook_id', 'd.next_attempt_at'])
    .select(sql<number>`row_number() over (partition by d.webhook_id order by d.next_attempt_at, d.id)`.as('turn'))
    .where('d.status', '=', 'pending')
    .where('d.next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('d.locked_until', 'is', null), eb('d.locked_until', '<=', now)]))
    .where((eb) =>
      lane.operator
        ? eb('w.owner_id', 'is', null)
        : // A disabled user's webhooks deliver nothing until the user is enabled again.
          eb.exists(
            eb.selectFrom('users as u').select('u.id').whereRef('u.id', '=', 'w.owner_id').where('u.disabled', '=', 0),
          ),
    );
  if (skip.length > 0) due = due.where('d.webhook_id', 'not in', skip);
  const leased = db
    .selectFrom('webhook_deliveries')
    .select(['webhook_id', sql<number>`count(*)`.as('n')])
    .where('status', '=', 'pending')
    .where('locked_until', '>', now)
    .groupBy('webhook_id');
  return db
    .selectFrom(due.as('r'))
    .leftJoin(leased.as('l'), 'l.webhook_id', 'r.webhook_id')
    .select('r.id')
    .where(sql<number>`r.turn + coalesce(l.n, 0)`, '<=', perWebhook)
    .orderBy('r.turn')
    .orderBy('r.next_attempt_at')
    .orderBy('r.id')
    .limit(limit);
}
