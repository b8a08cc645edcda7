// The console's webhooks: every subscription (the operator's and the users'), and one webhook's
// delivery log, newest first, each delivery with its status, attempts and last answer, and a button
// that makes one due again.
import type { Delivery, Webhook } from '../../store/webhooks.ts';
import { html } from '../html.ts';
import type { PageContext } from '../layout.ts';
import { consolePage } from './console.ts';

export function webhooksPage(
  ui: PageContext,
  input: { admin: string; webhooks: Webhook[]; owners: ReadonlyMap<string, string> },
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
  return consolePage(ui, {
    section: 'webhooks',
    title: t.t('admin.webhooks.title'),
    admin: input.admin,
    body:
      input.webhooks.length === 0
        ? html`<p>${t.t('admin.webhooks.none')}</p>`
        : html`<table>
<thead><tr><th scope="col">${t.t('admin.webhooks.url')}</th><th scope="col">${t.t('admin.webhooks.events')}</th>
<th scope="col">${t.t('admin.webhooks.owner')}</th><th scope="col">${t.t('admin.keys.created')}</th></tr></thead>
<tbody>
${rows}</tbody>
</table>`,
  });
}

export function deliveriesPage(
  ui: PageContext,
  input: { admin: string; csrfToken: string; webhook: Webhook; deliveries: Delivery[]; redelivered?: boolean },
): string {
  const { t } = ui;
  const action = `/admin/webhooks/${input.webhook.id}/redeliver`;
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
<p><code>${input.webhook.events}</code></p>
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
