// Webhook subscriptions, for the CLI (the operator's, receiving every event they subscribe to) and
// for /api/webhooks (a user's, receiving events about that user and the apps they registered): an
// https URL, the event types, and a Standard Webhooks secret shown once, kept encrypted under
// TESSERA_SECRET since signing needs it (../../tokens/at-rest.ts).
import { type EventType, EVENT_TYPES, type Requester, securityEvent } from '../events/index.ts';
import { isPublicAddress } from '../net/outbound.ts';
import { uriCharacterProblem } from '../net/uri-characters.ts';
import { EVERY_EVENT_TYPE } from '../store/outbox.ts';
import type { Webhook, WebhookStore } from '../store/webhooks.ts';
import { newSortableId } from '../tokens/opaque.ts';
import { encryptAtRest, openAtRest } from '../tokens/at-rest.ts';
import type { Secrets } from '../tokens/secrets.ts';
import { newWebhookSecret } from './signature.ts';

/** What a webhook can subscribe to: every event of the catalogue. */
export const WEBHOOK_EVENT_TYPES: readonly EventType[] = EVENT_TYPES;
/** How long a rotated-away secret keeps signing beside the new one, by default (a day). */
export const DEFAULT_SECRET_GRACE = 86_400;
// Each type at most once, so a subscription to every type of the catalogue is the longest there is
// (it grows with the catalogue: second factors took it past fifty).
const MAX_EVENTS = WEBHOOK_EVENT_TYPES.length;

export class WebhookInputError extends Error {
  override name = 'WebhookInputError';
  /** The event types the catalogue does not have, for the operator's CLI (the API's answer names none). */
  readonly unknownTypes: readonly string[];
  constructor(message: string, unknownTypes: readonly string[] = []) {
    super(message);
    this.unknownTypes = unknownTypes;
  }
}

export function sealWebhookSecret(webhookSecret: string, secrets: Secrets): string {
  return encryptAtRest(secrets, 'webhookSecret', webhookSecret);
}

export function openWebhookSecret(sealed: string, secrets: Secrets): string {
  return openAtRest(secrets, 'webhookSecret', sealed, 'a webhook secret');
}

/**
 * A receiver's URL: absolute https (http only where private addresses are allowed, for development),
 * no credentials or fragment, and not an address of our own network written as a literal. Names are
 * checked again on every delivery, on the addresses connected to (../../net/outbound.ts).
 */
export function webhookUrlProblem(url: string, allowPrivate: boolean): string | undefined {
  const characters = uriCharacterProblem(url);
  if (characters) return characters;
  const parsed = URL.parse(url);
  if (!parsed || url.length > 2000) return 'must be an absolute URL';
  if (parsed.protocol !== 'https:' && !(allowPrivate && parsed.protocol === 'http:')) return 'must be https';
  if (parsed.username !== '' || parsed.password !== '') return 'must not contain credentials';
  if (url.includes('#')) return 'must not contain a fragment';
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (
    !allowPrivate &&
    (host === 'localhost' || host.endsWith('.localhost') || (!isPublicAddress(host) && /^[\d.:a-f]+$/i.test(host)))
  )
    return 'must not point to a loopback, private or link-local address';
  return undefined;
}

/** What a subscription to every type is called on the command line and in the API. */
export const ALL_EVENTS = 'all';

/**
 * The event types of a subscription as stored: the types named, or, for `all`, the wildcard, which
 * matches every type, those the catalogue gains later too (it is not expanded here).
 */
export function checkEventTypes(types: readonly string[]): string[] {
  const unique = [...new Set(types.map((t) => t.trim()).filter((t) => t !== ''))];
  if (unique.includes(ALL_EVENTS)) {
    if (unique.length > 1) throw new WebhookInputError(`events: "${ALL_EVENTS}" stands alone, without types beside it`);
    return [EVERY_EVENT_TYPE];
  }
  const unknown = unique.filter((t) => !WEBHOOK_EVENT_TYPES.includes(t as EventType));
  if (unique.length === 0 || unique.length > MAX_EVENTS || unknown.length > 0) {
    throw new WebhookInputError(
      `events must be event types of the catalogue, or "${ALL_EVENTS}" alone (${unknown.length} unknown)`,
      unknown,
    );
  }
  return unique;
}

/** A subscription's event types as the CLI and the API show them: `["all"]` for the wildcard. */
export function eventTypesShown(events: string): string[] {
  return events === EVERY_EVENT_TYPE ? [ALL_EVENTS] : events.split(' ');
}

/**
 * A webhook, with its secret shown once. A user's webhooks are at most `perOwner`
 * (TESSERA_WEBHOOKS_PER_USER): every event about the user is written with one delivery per webhook,
 * so an unbounded number would let one user multiply the outbox and its receivers' load at will.
 */
export async function createWebhook(
  store: WebhookStore,
  secret: Secrets,
  input: {
    url: string;
    events: readonly string[];
    ownerId: string | null;
    allowPrivate: boolean;
    /** For a user's webhook: the most they may have. */
    perOwner?: number;
  },
  now: number,
  requester: Requester,
): Promise<{ webhook: Webhook; secret: string }> {
  const problem = webhookUrlProblem(input.url, input.allowPrivate);
  if (problem) throw new WebhookInputError(`url ${problem}`);
  const events = checkEventTypes(input.events);
  const webhookSecret = newWebhookSecret();
  const webhook: Webhook = {
    id: `wh_${newSortableId()}`,
    url: input.url,
    events: events.join(' '),
    ownerId: input.ownerId,
    secretEnc: sealWebhookSecret(webhookSecret, secret),
    previousSecretEnc: null,
    previousUntil: null,
    createdAt: now,
  };
  const data = { webhook: webhook.id, url: webhook.url, events: eventTypesShown(webhook.events) };
  const event = securityEvent('webhook.created', now, { userId: input.ownerId, requester, data });
  if (!(await store.createWebhook(webhook, event, input.ownerId === null ? undefined : input.perOwner))) {
    throw new WebhookInputError(`an account may have at most ${input.perOwner} webhooks; delete one first`);
  }
  return { webhook, secret: webhookSecret };
}

/** A webhook as the CLI and the API show it: never its secret. */
export function describeWebhook(webhook: Webhook): Record<string, unknown> {
  return {
    id: webhook.id,
    url: webhook.url,
    events: eventTypesShown(webhook.events),
    owner_id: webhook.ownerId,
    created_at: new Date(webhook.createdAt * 1000).toISOString(),
  };
}
