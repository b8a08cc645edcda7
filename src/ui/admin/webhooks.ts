// The console's webhooks: every subscription (the operator's and the users'), a new one (its secret
// shown once), and one webhook's form (its URL and event types, its deletion) above its delivery log,
// newest first, each delivery with its status, attempts and last answer, and a button that makes one
// due again.
import type { Delivery, Webhook } from '../../store/webhooks.ts';
import { html, type SafeHtml } from '../html.ts';
import type { PageContext } from '../layout.ts';
import { actionButton, consolePage } from './console.ts';

export function webhooksPage(
  ui: PageContext,
  input: { admin: string; webhooks: Webhook[]; owners: ReadonlyMap<string, string>; deleted?: string | undefined },
): string {
  const { t } = ui;
  const rows = input.webhooks.map(
    (w) => html`<tr>
<td><a href="/admin/webhooks/${w.id}">${w.url}</a></td>
<td><code>${w.events}</code></td>
<td>${w.ownerId === null ? t.t('admin.webhooks.operator') : (input.owners.get(w.ownerId) ?? w.ownerId)}</td>
<td>${t.dateTime(w.createdAt)}</td>
</tr>
`,
  );
  const deleted = input.deleted
    ? html`<p role="status">${t.t('admin.webhook.deleted', { url: input.deleted })}</p>`
    : '';
  return consolePage(ui, {
    section: 'webhooks',
    title: t.t('admin.webhooks.title'),
    admin: input.admin,
    body: html`${deleted}
<p><a href="/admin/webhooks/new">${t.t('admin.webhooks.new')}</a></p>
${
  input.webhooks.length === 0
    ? html`<p>${t.t('admin.webhooks.none')}</p>`
    : html`<table>
<thead><tr><th scope="col">${t.t('admin.webhooks.url')}</th><th scope="col">${t.t('admin.webhooks.events')}</th>
<th scope="col">${t.t('admin.webhooks.owner')}</th><th scope="col">${t.t('admin.keys.created')}</th></tr></thead>
<tbody>
${rows}</tbody>
</table>`
}`,
  });
}

/** What the subscription's form holds: a webhook's values, or what was posted and refused. */
export interface WebhookFields {
  url: string;
  events: string;
}

/** The form that makes a webhook (`action` /admin/webhooks/new) or changes one. */
function webhookForm(ui: PageContext, action: string, csrfToken: string, fields: WebhookFields, submit: string) {
  const { t } = ui;
  return html`<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${csrfToken}">
<label for="url">${t.t('admin.webhooks.url')}</label>
<input type="url" id="url" name="url" value="${fields.url}" spellcheck="false" required>
<label for="events">${t.t('admin.webhook.events')}</label>
<input type="text" id="events" name="events" value="${fields.events}" spellcheck="false" required>
<button type="submit">${submit}</button>
</form>`;
}

const refusal = (ui: PageContext, problem: string | undefined): SafeHtml | '' =>
  problem ? html`<p class="alert" role="alert">${ui.t.t('admin.client.problem', { problem })}</p>` : '';

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
    body: html`${refusal(ui, input.problem)}
${form}`,
  });
}

/** A new webhook's signing secret: shown this once (it is kept sealed). */
export function webhookSecretPage(ui: PageContext, input: { admin: string; webhook: Webhook; secret: string }) {
  const { t } = ui;
  return consolePage(ui, {
    section: 'webhooks',
    title: t.t('admin.webhook.secretTitle', { url: input.webhook.url }),
    admin: input.admin,
    body: html`<p role="status">${t.t('admin.webhook.created')}</p>
<p>${t.t('admin.client.secretOnce')}</p>
<pre id="webhook-secret">${input.secret}</pre>
<p><a href="/admin/webhooks/${input.webhook.id}">${t.t('admin.webhook.back')}</a></p>`,
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
  const rows = input.deliveries.map(
    (d) => html`<tr>
<td>${t.dateTime(d.createdAt)}</td>
<td><code>${d.eventType}</code></td>
<td>${d.status}</td>
<td>${d.attempts}</td>
<td>${d.lastStatus ?? d.lastError ?? ''}</td>
<td>${
      d.status === 'pending'
        ? ''
        : html`<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="delivery" value="${d.id}">
<button type="submit" class="secondary" aria-label="${again(d)}">${t.t('admin.webhooks.redeliver')}</button>
</form>`
    }</td>
</tr>
`,
  );
  return consolePage(ui, {
    section: 'webhooks',
    title: t.t('admin.webhooks.deliveries', { url: input.webhook.url }),
    admin: input.admin,
    body: html`${input.redelivered ? html`<p role="status">${t.t('admin.webhooks.redelivered')}</p>` : ''}
${input.saved ? html`<p role="status">${t.t('admin.client.saved')}</p>` : ''}
${refusal(ui, input.problem)}
<h2>${t.t('admin.webhook.subscription')}</h2>
${webhookForm(ui, base, input.csrfToken, fields, t.t('admin.client.save'))}
<div class="actions">
${actionButton(`${base}/delete`, input.csrfToken, t.t('admin.webhook.delete'))}
</div>
<h2>${t.t('admin.webhooks.deliveryLog')}</h2>
${
  input.deliveries.length === 0
    ? html`<p>${t.t('admin.webhooks.noDeliveries')}</p>`
    : html`<table>
<thead><tr><th scope="col">${t.t('admin.events.at')}</th><th scope="col">${t.t('admin.events.event')}</th>
<th scope="col">${t.t('admin.users.state')}</th><th scope="col">${t.t('admin.webhooks.attempts')}</th>
<th scope="col">${t.t('admin.webhooks.last')}</th><th scope="col">${t.t('admin.user.actions')}</th></tr></thead>
<tbody>
${rows}</tbody>
</table>`
}`,
  });
}
