// Rows of what the server records and sends: the audit trail (events), the webhooks, their deliveries
// and attempts, and the logout tokens to post; the conventions of ./tables.ts.
import type { OutboxRow } from './outbox-row.ts';

/** A security event of the audit trail (src/events); `data` is JSON. */
export interface EventRow {
  id: string;
  at: number;
  type: string;
  user_id: string | null;
  client_id: string | null;
  ip: string | null;
  user_agent: string | null;
  data: string | null;
  /** The language of the page the event came from (a security notification's, src/mail/security.ts). */
  locale: string | null;
  /** The request it came from, its log lines' `reqId` (migration 016); null for the command line. */
  request_id: string | null;
  /** Who acted, for an operator's change (migration 021): `cli`, `client:ID` or `user:ID`; else null. */
  actor: string | null;
}

/** A webhook subscription: where, which event types, and its signing secret (encrypted, src/events/webhooks). */
export interface WebhookRow {
  id: string;
  url: string;
  /** Space-separated event types. */
  events: string;
  /** The user whose webhook it is (created with a `webhooks` token); null for the operator's. */
  owner_id: string | null;
  secret_enc: string;
  /** The secret before the last rotation, still signing alongside until previous_until. */
  previous_secret_enc: string | null;
  previous_until: number | null;
  created_at: number;
}

/** One event for one webhook: the outbox row, written in the same transaction as the event. */
export interface WebhookDeliveryRow extends OutboxRow<'delivered'> {
  /** `{event id}.{webhook id}`: the webhook-id header, the same on every attempt. */
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  /** The JSON body sent. */
  payload: string;
  last_status: number | null;
}

/** One attempt of a delivery: its answer's status (null when none came), how long it took, what failed. */
export interface WebhookAttemptRow {
  delivery_id: string;
  attempt: number;
  at: number;
  status: number | null;
  duration_ms: number;
  error: string | null;
}

/** A logout token to post to a client (Back-Channel Logout 1.0): the outbox `logout_deliveries`. */
export interface LogoutDeliveryRow extends OutboxRow<'delivered'> {
  id: string;
  client_id: string;
  uri: string;
  sub: string;
  sid: string | null;
}
