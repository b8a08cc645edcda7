// Where an outbox entry stands, as the CLI's --json and the admin API show it.
import type { OutboxEntry } from '../store/outbox.ts';

const iso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();

/** Where an outbox entry (a mail, a webhook delivery) stands: its attempts, and when the next or the last was. */
export function describeSchedule(entry: OutboxEntry<string>): Record<string, unknown> {
  return {
    status: entry.status,
    attempts: entry.attempts,
    created_at: iso(entry.createdAt),
    next_attempt_at: entry.status === 'pending' ? iso(entry.nextAttemptAt) : null,
    finished_at: entry.finishedAt === null ? null : iso(entry.finishedAt),
  };
}
