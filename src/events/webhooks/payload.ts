// What a webhook receives for an event: the Standard Webhooks payload, `{ type, timestamp, data }`,
// where `data` is the event's catalogue entry (docs/events.md, "Events and webhooks"): its id, user,
// client, source address, user agent and request id (the `reqId` of Tessera's log lines), and the
// facts of its type, and for an operator's change its `actor` (`cli`, `client:ID`, `user:ID`).
// Catalogue version 1: fields may be added, never removed or given another meaning; a change of
// meaning is a new type. A user's own webhook
// gets the address, user agent and request id only of events about that user: an event about one of
// their apps caused by someone else says who, not from where.
import type { SecurityEvent } from '../index.ts';

/** `webhook.test` is the one type outside the audit trail: `tessera webhooks test`. */
type Payloadable = Omit<SecurityEvent, 'type' | 'locale' | 'requestId' | 'actor'> & {
  type: SecurityEvent['type'] | 'webhook.test';
  requestId?: string | null;
  actor?: string | null;
};

export function webhookPayload(event: Payloadable, withRequester: boolean): string {
  const data: Record<string, unknown> = {
    event_id: event.id,
    user_id: event.userId,
    client_id: event.clientId,
    ...(withRequester ? { ip: event.ip, user_agent: event.userAgent, request_id: event.requestId ?? null } : {}),
    ...(event.actor ? { actor: event.actor } : {}),
    ...event.data,
  };
  return JSON.stringify({ type: event.type, timestamp: new Date(event.at * 1000).toISOString(), data });
}
