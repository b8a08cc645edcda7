// The console's webhooks: every subscription (the operator's and the users'), a new one (its secret
// shown once), and one webhook's form (its URL and event types, its deletion) above its delivery log,
// newest first, each delivery with its status, attempts and last answer, and a button that makes one
// due again.
import type { Delivery, Webhook } from '../../store/webhooks.ts';
import { html } from '../html.ts';
import type { PageContext } from '../layout.ts';
import {
  actionButton,
  graceField,
  type Column,
  consolePage,
  dataTable,
  type Listing,
  listingPage,
  postForm,
  problemAlert,
  savedNotice,
  secretPage,
} from './console.ts';

/** The list of every webhook; `owners` has the usernames of the users who own some, by id. */
export function webhooksPage(
  ui: PageContext,
  input: Listing<Webhook> & { owners: ReadonlyMap<string, string> },
): string {
  const { t } = ui;
  const owner = (w: Webhook) =>
    w.ownerId === null ? t.t('admin.webhooks.operator') : (input.owners.get(w.ownerId) ?? w.ownerId);
  const columns: ReadonlyArray<Column<Webhook>> = [
    ['admin.webhooks.url', (w) => html`<a href="/admin/webhooks/${w.id}">${w.url}</a>`],
    ['admin.webhooks.events', (w) => html`<code>${w.events}</code>`],
    ['admin.webhooks.owner', owner],
    ['admin.keys.created', (w) => t.dateTime(w.createdAt)],
  ];
  const deleted = input.deleted && t.t('admin.webhook.deleted', { url: input.deleted });
  return listingPage(ui, 'webhooks', columns, { ...input, deleted });
}

/** What the subscription's form holds: a webhook's values, or what was posted and refused. */
export interface WebhookFields {
  url: string;
  events: string;
}

/** The form that makes a webhook (`action` /admin/webhooks/new) or changes one. */
function webhookForm(ui: PageContext, action: string, csrfToken: string, fields: WebhookFields, submit: string) {
  const { t } = ui;
  return postForm(
    action,
    csrfToken,
    html`<label for="url">${t.t('admin.webhooks.url')}</label>
<input type="url" id="url" name="url" value="${fields.url}" spellcheck="false" required>
<label for="events">${t.t('admin.webhook.events')}</label>
<input type="text" id="events" name="events" value="${fields.events}" spellcheck="false" required>
<button type="submit">${submit}</button>`,
  );
}

export function newWebhookPage(
  ui: PageContext,
  input: { admin: string; csrfToken: string; fields: WebhookFields; problem?: string | undefined },
): string {
  const { t } = ui;
  const form = webhookForm(ui, '/admin/webhooks/new', input.csrfToken, input.fields, t.t('admin.webhook.create'));
  return consolePage(ui, {
    section: 'webhooks',
    title: t.t('admin.webhooks.new'),
    admin: input.admin,
    body: html`${problemAlert(ui, input.problem)}
${form}`,
  });
}

/**
 * A webhook's signing secret, new or rotated: shown this once (it is kept sealed). `previousUntil`:
 * after a rotation with a grace, until when the previous secret signs the deliveries too.
 */
export function webhookSecretPage(
  ui: PageContext,
  input: { admin: string; webhook: Webhook; secret: string; previousUntil: number | null; rotated?: boolean },
) {
  const { t } = ui;
  return secretPage(ui, 'webhooks', input, {
    title: t.t('admin.webhook.secretTitle', { url: input.webhook.url }),
    status: t.t(input.rotated ? 'admin.webhook.rotated' : 'admin.webhook.created'),
    back: `/admin/webhooks/${input.webhook.id}`,
  });
}

export function deliveriesPage(
  ui: PageContext,
  input: {
    admin: string;
    csrfToken: string;
    webhook: Webhook;
    deliveries: Delivery[];
    redelivered?: boolean;
    /** A test delivery was just queued (?tested=1). */
    tested?: boolean;
    saved?: boolean;
    /** The subscription's form as posted and refused, and why. */
    fields?: WebhookFields;
    problem?: string | undefined;
  },
): string {
  const { t } = ui;
  const base = `/admin/webhooks/${input.webhook.id}`;
  const action = `${base}/redeliver`;
  const fields = input.fields ?? { url: input.webhook.url, events: input.webhook.events };
  const again = (d: Delivery) =>
    t.t('admin.webhooks.redeliverOne', { event: d.eventType, at: t.dateTime(d.createdAt) });
  const redeliverButton = (d: Delivery) =>
    postForm(
      action,
      input.csrfToken,
      html`<input type="hidden" name="delivery" value="${d.id}">
<button type="submit" class="secondary" aria-label="${again(d)}">${t.t('admin.webhooks.redeliver')}</button>`,
    );
  const rows = input.deliveries.map((d) => [
    t.dateTime(d.createdAt),
    html`<code>${d.eventType}</code>`,
    d.status,
    d.attempts,
    d.lastStatus ?? d.lastError ?? '',
    d.status === 'pending' ? '' : redeliverButton(d),
  ]);
  return consolePage(ui, {
    section: 'webhooks',
    title: t.t('admin.webhooks.deliveries', { url: input.webhook.url }),
    admin: input.admin,
    body: html`${input.redelivered ? html`<p role="status">${t.t('admin.webhooks.redelivered')}</p>` : ''}
${input.tested ? html`<p role="status">${t.t('admin.webhooks.tested')}</p>` : ''}
${savedNotice(ui, input.saved)}
${problemAlert(ui, input.problem)}
<h2>${t.t('admin.webhook.subscription')}</h2>
${webhookForm(ui, base, input.csrfToken, fields, t.t('admin.client.save'))}
<div class="actions">
${actionButton(`${base}/test`, input.csrfToken, t.t('admin.webhook.test'))}
${actionButton(`${base}/delete`, input.csrfToken, t.t('admin.webhook.delete'))}
</div>
<h2>${t.t('admin.webhook.rotate')}</h2>
${postForm(
  `${base}/rotate-secret`,
  input.csrfToken,
  html`${graceField(ui, t.t('admin.webhook.grace'), 86_400)}
<button type="submit" class="secondary">${t.t('admin.webhook.rotate')}</button>`,
)}
<h2>${t.t('admin.webhooks.deliveryLog')}</h2>
${dataTable(
  t.t('admin.webhooks.noDeliveries'),
  [
    t.t('admin.events.at'),
    t.t('admin.events.event'),
    t.t('admin.users.state'),
    t.t('admin.webhooks.attempts'),
    t.t('admin.webhooks.last'),
    t.t('admin.user.actions'),
  ],
  rows,
)}`,
  });
}
