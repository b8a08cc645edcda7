// `tessera events list`: the audit trail (src/events), newest first, filtered by user, client, type,
// time and request (the `reqId` of a log line, to go from a line to its events).
import type { Config } from '../../config/index.ts';
import { EVENT_TYPES, type EventType } from '../../events/index.ts';
import { describeEvent, listEventPage } from '../../admin/events.ts';
import type { EventStore } from '../../store/events.ts';
import type { UserStore } from '../../store/users.ts';
import { UsageError } from '../operations.ts';
import { unknownEventTypes } from './event-types.ts';
import { formatTime, type Io, JSON_OPTION, parse, strings } from './common.ts';

export async function eventsCommand(
  store: EventStore & UserStore,
  _config: Config,
  args: string[],
  io: Io,
  now = Math.floor(Date.now() / 1000),
): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'list') throw new UsageError(sub ? `unknown events command "${sub}"` : 'events needs a command: list');
  const { values } = parse(rest, { ...strings('user', 'client', 'type', 'request', 'since', 'limit'), ...JSON_OPTION });
  if (values.type !== undefined && !EVENT_TYPES.includes(values.type as EventType)) {
    throw unknownEventTypes('--type', [values.type]);
  }
  const limit = values.limit === undefined ? 100 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive integer');
  const query = { user: values.user, client: values.client, request: values.request, since: values.since };
  const { events } = await listEventPage(store, { ...query, type: values.type, limit }, now);
  if (values.json) {
    io.out(JSON.stringify(events.map(describeEvent), null, 2));
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
