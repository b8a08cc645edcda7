// The audit trail: security events, each with its time, type, user, client, source address and user
// agent, and never a secret. An event is written in the same transaction as the change it records
// where there is one (the store's write methods take it along), so the trail and the data agree.
// Issuing tokens is not an event: the token endpoint's hot path writes nothing for the trail (the
// metrics count tokens). Names are `subject.past_tense`, the catalogue the webhooks build on.
import { newSortableId } from '../tokens/opaque.ts';

export const EVENT_TYPES = [
  'user.signed_in',
  'user.sign_in_failed',
  'user.sign_in_throttled',
  'user.locked',
  'user.unlocked',
  'user.signed_out',
  'user.created',
  'user.disabled',
  'user.enabled',
  'user.deleted',
  'user.updated',
  'user.roles_changed',
  'user.password_changed',
  'user.password_reset_requested',
  'user.password_reset',
  'user.invited',
  'user.invitation_accepted',
  'user.email_verified',
  'user.email_change_requested',
  'user.registration_requested',
  'user.registered',
  'passkey.added',
  'passkey.renamed',
  'passkey.removed',
  'passkey.add_failed',
  'passkey.suspended',
  'mfa.enrolled',
  'mfa.enrol_failed',
  'mfa.removed',
  'mfa.reset',
  'recovery_code.used',
  'recovery_codes.created',
  'user.upstream_signed_in',
  'user.upstream_sign_in_failed',
  'user.upstream_linked',
  'user.upstream_unlinked',
  'consent.granted',
  'consent.withdrawn',
  'device_authorization.approved',
  'device_authorization.denied',
  'code.replayed',
  'refresh_token.reused',
  'token.revoked',
  'token.exchanged',
  'id_jag.issued',
  'id_jag.redeemed',
  'client.created',
  'client.updated',
  'client.deleted',
  'client.secret_rotated',
  'client.grants_revoked',
  'client.registered',
  'resource.created',
  'resource.updated',
  'resource.deleted',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'webhook.tested',
  'webhook.redelivered',
  'provider.created',
  'provider.updated',
  'provider.deleted',
  'connection.created',
  'connection.updated',
  'connection.deleted',
  'key.rotated',
  'database.restored',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Who sent the request an event comes from: its source address and user agent, the language of its
 * page (a browser route's; the mail that tells the person of the event speaks it), and the request's
 * id (the `reqId` of its log lines), so that the trail and the log can be joined.
 */
export interface Requester {
  ip: string | null;
  userAgent: string | null;
  locale?: string | null;
  requestId?: string | null;
  /**
   * Who acted, when an operator's tool made the change: `cli`, `client:ID` (an admin client) or
   * `user:ID` (a person with the admin role). Absent for what people do to their own accounts.
   */
  actor?: string | null;
}

/** Facts of an event beyond its user and client: ids, scopes, reasons; never a secret or a token. */
export type EventData = Record<string, string | number | boolean | string[]>;

export interface SecurityEvent {
  id: string;
  /** Epoch seconds. */
  at: number;
  type: EventType;
  userId: string | null;
  clientId: string | null;
  ip: string | null;
  userAgent: string | null;
  data: EventData | null;
  /** The language of the page the event came from; null for the command line and the API. */
  locale: string | null;
  /** The id of the request it came from (its log lines' `reqId`); null for the command line. */
  requestId: string | null;
  /** Who acted for an operator's change (`cli`, `client:ID`, `user:ID`); null otherwise. */
  actor: string | null;
}

/** A user agent is kept to its first 256 characters: it describes, it is not evidence. */
const USER_AGENT_LENGTH = 256;

export function securityEvent(
  type: EventType,
  at: number,
  fields: { userId?: string | null; clientId?: string | null; requester?: Requester | undefined; data?: EventData },
): SecurityEvent {
  return {
    id: newSortableId(),
    at,
    type,
    userId: fields.userId ?? null,
    clientId: fields.clientId ?? null,
    ip: fields.requester?.ip ?? null,
    userAgent: fields.requester?.userAgent?.slice(0, USER_AGENT_LENGTH) ?? null,
    data: fields.data ?? null,
    locale: fields.requester?.locale ?? null,
    requestId: fields.requester?.requestId ?? null,
    actor: fields.requester?.actor ?? null,
  };
}

/** The command line's requester: no address, and the command as the user agent. */
export const CLI: Requester = { ip: null, userAgent: 'tessera CLI', actor: 'cli' };
