// Who receives an event by webhook, and what of it: the one rule, applied by the outbox's fan-out
// (../../store/outbox.ts) as each event is written.
//
// - The operator's webhooks (`tessera webhooks create`): every event of the types they name, whole.
// - A user's webhook (/api/webhooks): the events about that user (`user_id` the owner), whole.
// - And, about an app that user registered (RFC 7591), only what follows a user's consent to it: the
//   consent itself, its withdrawal, the tokens of that grant revoked or replayed, and the app's own
//   changes. Never a sign-in on the app's login page, failed, throttled or not (that would tell the
//   app's owner which usernames exist and when people type their passwords), nor any other user's
//   account events. Of such an event caused by someone else, the webhook gets no address or user
//   agent; its `user_id` is the user who consented, whom the app knows already as the `sub` of the
//   tokens it was issued.
import type { EventType, SecurityEvent } from '../index.ts';
import { webhookPayload } from './payload.ts';

/** What an app's owner hears of an event about the app caused by another user: what follows consent. */
export const APP_OWNER_EVENT_TYPES: ReadonlySet<EventType> = new Set<EventType>([
  'consent.granted',
  'consent.withdrawn',
  'device_authorization.approved',
  'device_authorization.denied',
  'token.revoked',
  'code.replayed',
  'refresh_token.reused',
  'client.registered',
  'client.updated',
  'client.secret_rotated',
  'client.grants_revoked',
  'client.deleted',
]);

export interface WebhookAudience {
  /** The user whose own webhooks receive the whole event; null when it is about no user. */
  user: string | null;
  /** The client whose owner's webhooks receive it as an app owner; null when they do not. */
  appOf: string | null;
  /** The payload for the operator's webhooks and the user's own. */
  whole: string;
  /** The payload for the app's owner: without the address and user agent of someone else's request. */
  forAppOwner: string;
}

export function webhookAudience(event: SecurityEvent): WebhookAudience {
  return {
    user: event.userId,
    appOf: event.clientId !== null && APP_OWNER_EVENT_TYPES.has(event.type) ? event.clientId : null,
    whole: webhookPayload(event, true),
    forAppOwner: webhookPayload(event, false),
  };
}
