// `tessera events list`: the audit trail (src/events), newest first, filtered by user, client, type,
// time and request (the `reqId` of a log line, to go from a line to its events).
import type { Config } from '../../config/index.ts';
import { EVENT_TYPES, type EventType } from '../../events/index.ts';
import type { EventStore } from '../../store/events.ts';
import type { UserStore } from '../../store/users.ts';
import { UsageError } from '../operations.ts';
import { unknownEventTypes } from './event-types.ts';
import { formatTime, type Io, NotFound, parse } from './common.ts';

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `--since`: an ISO 8601 date or time (`2026-11-01`, `2026-11-01T12:00:00Z`), or a span back (`24h`, `7d`). */
export function parseSince(value: string, now: number): number {
  const span = /^(\d+)([smhd])$/.exec(value);
  if (span) return now - Number(span[1]) * UNITS[span[2]!]!;
  const time = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(time))
    throw new UsageError(`--since: "${value}" is neither a date (2026-11-01) nor a span (24h, 7d)`);
  return Math.floor(time / 1000);
}

export async function eventsCommand(
  store: EventStore & UserStore,
  _config: Config,
  args: string[],
  io: Io,
  now = Math.floor(Date.now() / 1000),
): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'list') throw new UsageError(sub ? `unknown events command "${sub}"` : 'events needs a command: list');
  const { values } = parse(rest, {
    user: { type: 'string' },
    client: { type: 'string' },
    type: { type: 'string' },
    request: { type: 'string' },
    since: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.type !== undefined && !EVENT_TYPES.includes(values.type as EventType)) {
    throw unknownEventTypes('--type', [values.type]);
  }
  const limit = values.limit === undefined ? 100 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive integer');
  let userId: string | undefined;
  if (values.user !== undefined) {
    const user = (await store.getUserByUsername(values.user)) ?? (await store.getUserById(values.user));
    if (!user) throw new NotFound(`no user ${values.user}`);
    userId = user.id;
  }
  const events = await store.listEvents({
    ...(userId !== undefined ? { userId } : {}),
    ...(values.client !== undefined ? { clientId: values.client } : {}),
    ...(values.type !== undefined ? { type: values.type as EventType } : {}),
    ...(values.request !== undefined ? { requestId: values.request } : {}),
    ...(values.since !== undefined ? { since: parseSince(values.since, now) } : {}),
    limit,
  });
  if (values.json) {
    const described = events.map((e) => ({
      id: e.id,
      at: formatTime(e.at),
      type: e.type,
      user_id: e.userId,
      client_id: e.clientId,
      ip: e.ip,
      user_agent: e.userAgent,
      request_id: e.requestId,
      actor: e.actor,
      data: e.data,
    }));
    io.out(JSON.stringify(described, null, 2));
    return 0;
  }
  if (events.length === 0) io.out('no events');
  const usernames = new Map((await store.listUsers()).map((user) => [user.id, user.username]));
  for (const e of events) {
    const user = e.userId === null ? '-' : (usernames.get(e.userId) ?? e.userId);
    const data = e.data ? `  ${JSON.stringify(e.data)}` : '';
    const request = e.requestId === null ? '' : `  request ${e.requestId}`;
    const actor = e.actor === null ? '' : `  by ${e.actor}`;
    const where = `${user}  ${e.clientId ?? '-'}  ${e.ip ?? '-'}`;
    io.out(`${formatTime(e.at)}  ${e.type.padEnd(22)}  ${where}${data}${request}${actor}`);
  }
  return 0;
}
