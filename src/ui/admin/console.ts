// What every page of the admin console shares: its navigation (users, the event log, clients, APIs,
// providers, webhooks, keys), who is signed in, and a wide card for its tables. Plain links and
// forms: it works without JavaScript.
import type { MessageKey } from '../../i18n/index.ts';
import { html, type SafeHtml } from '../html.ts';
import { layout, type PageContext } from '../layout.ts';

export type ConsoleSection = 'users' | 'events' | 'clients' | 'resources' | 'providers' | 'webhooks' | 'keys';

const SECTIONS: ReadonlyArray<[ConsoleSection, string, MessageKey]> = [
  ['users', '/admin/users', 'admin.nav.users'],
  ['events', '/admin/events', 'admin.nav.events'],
  ['clients', '/admin/clients', 'admin.nav.clients'],
  ['resources', '/admin/resources', 'admin.nav.resources'],
  ['providers', '/admin/providers', 'admin.nav.providers'],
  ['webhooks', '/admin/webhooks', 'admin.nav.webhooks'],
  ['keys', '/admin/keys', 'admin.nav.keys'],
];

/** A page of the console: `title` its heading, `body` what follows it. */
export function consolePage(
  ui: PageContext,
  input: { section: ConsoleSection; title: string; admin: string; body: SafeHtml },
): string {
  const { t } = ui;
  return layout(
    ui,
    input.title,
    html`<nav class="console" aria-label="${t.t('admin.title')}">
<ul>
${SECTIONS.map(([section, href, key]) => {
  const current = section === input.section ? html` aria-current="page"` : '';
  return html`<li><a href="${href}"${current}>${t.t(key)}</a></li>\n`;
})}</ul>
</nav>
<p class="muted">${t.html('account.signedInAs', { username: input.admin })}
<a href="/oauth2/logout">${t.t('account.signOut')}</a></p>
<h1>${input.title}</h1>
${input.body}`,
    [],
    { wide: true },
  );
}

/**
 * A section's list page (clients, APIs, providers): what was just done, a link to add one, and a table
 * of them, or a line saying there is none.
 */
export function listingPage(
  ui: PageContext,
  input: {
    section: ConsoleSection;
    title: string;
    admin: string;
    notice: SafeHtml | '';
    add: { href: string; label: string };
    none: string;
    headers: string[];
    rows: SafeHtml[];
  },
): string {
  const { section, title, admin, add } = input;
  const table =
    input.rows.length === 0
      ? html`<p>${input.none}</p>`
      : html`<table>
<thead><tr>${input.headers.map((header) => html`<th scope="col">${header}</th>`)}</tr></thead>
<tbody>
${input.rows}</tbody>
</table>`;
  return consolePage(ui, {
    section,
    title,
    admin,
    body: html`${input.notice}
<p><a href="${add.href}">${add.label}</a></p>
${table}`,
  });
}

/** A button posting to `action` with the form token and nothing else (the action is in the path). */
export function actionButton(action: string, csrfToken: string, label: string, secondary = true): SafeHtml {
  return html`<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${csrfToken}">
<button type="submit"${secondary ? html` class="secondary"` : ''}>${label}</button>
</form>`;
}

/** A link to the next page of a list, when there is one: the same query, the cursor given. */
export function nextPageLink(ui: PageContext, path: string, query: Record<string, string>, cursor: string | null) {
  if (cursor === null) return '';
  const params = new URLSearchParams({ ...query, cursor });
  return html`<p><a href="${`${path}?${params}`}" rel="next">${ui.t.t('admin.nextPage')}</a></p>`;
}
