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

/** A cell of a table row: text (escaped), markup, or nothing (null). */
export type Cell = string | number | SafeHtml | null;

/**
 * A table of the console: a header per column and a row of cells per line, or the line `none` when
 * there are no rows.
 */
export function dataTable(none: string, headers: readonly string[], rows: ReadonlyArray<readonly Cell[]>): SafeHtml {
  if (rows.length === 0) return html`<p>${none}</p>`;
  return html`<table>
<thead><tr>${headers.map((header) => html`<th scope="col">${header}</th>`)}</tr></thead>
<tbody>
${rows.map((cells) => html`<tr>\n${cells.map((cell) => html`<td>${cell}</td>\n`)}</tr>\n`)}</tbody>
</table>`;
}

/** The sections that list objects, each with its list page's title, "add" link and "none" line. */
const LISTED_SECTIONS = {
  clients: { title: 'admin.clients.title', add: 'admin.clients.new', none: 'admin.clients.none' },
  resources: { title: 'admin.resources.title', add: 'admin.resources.new', none: 'admin.resources.none' },
  providers: { title: 'admin.providers.title', add: 'admin.providers.new', none: 'admin.providers.none' },
  webhooks: { title: 'admin.webhooks.title', add: 'admin.webhooks.new', none: 'admin.webhooks.none' },
} as const satisfies Record<string, { title: MessageKey; add: MessageKey; none: MessageKey }>;

export type ListedSection = keyof typeof LISTED_SECTIONS;

/** A column of a section's list: its header's message, and its cell for one of the objects. */
export type Column<Item> = readonly [header: MessageKey, cell: (item: Item) => Cell];

/** What a section's list page shows: the objects, and what was just deleted (?deleted=…). */
export interface Listing<Item> {
  admin: string;
  items: readonly Item[];
  deleted?: string | undefined;
}

/**
 * A section's list page (clients, APIs, providers, webhooks): what was just deleted (`deleted`, said
 * in the section's words), a link to add one, and a table of them, or a line saying there is none.
 */
export function listingPage<Item>(
  ui: PageContext,
  section: ListedSection,
  columns: ReadonlyArray<Column<Item>>,
  input: Listing<Item> & { deleted: string | undefined },
): string {
  const { t } = ui;
  const texts = LISTED_SECTIONS[section];
  const table = dataTable(
    t.t(texts.none),
    columns.map(([header]) => t.t(header)),
    input.items.map((item) => columns.map(([, cell]) => cell(item))),
  );
  return consolePage(ui, {
    section,
    title: t.t(texts.title),
    admin: input.admin,
    body: html`${input.deleted ? html`<p role="status">${input.deleted}</p>` : ''}
<p><a href="/admin/${section}/new">${t.t(texts.add)}</a></p>
${table}`,
  });
}

/** What the page says after a change was saved (?saved=1). */
export const savedNotice = (ui: PageContext, saved: boolean | undefined): SafeHtml | '' =>
  saved ? html`<p role="status">${ui.t.t('admin.client.saved')}</p>` : '';

/** Why the operations refused a form (their words, for the operator), as an alert. */
export const problemAlert = (ui: PageContext, problem: string | undefined): SafeHtml | '' =>
  problem ? html`<p class="alert" role="alert">${ui.t.t('admin.client.problem', { problem })}</p>` : '';

/** What an object's page (a client's, an API's, a provider's) is given besides its own. */
export interface ObjectPageInput {
  admin: string;
  csrfToken: string;
  /** Whether a change was just saved (?saved=1). */
  saved?: boolean | undefined;
  /** Why the form was refused (the operations' words, for the operator). */
  problem?: string | undefined;
}

/**
 * One object's page in a section (a client, an API, a provider), new or edited: what was just saved
 * or refused (`input`), the form, and for one that exists the buttons of its actions.
 */
export function objectPage(
  ui: PageContext,
  section: ListedSection,
  input: ObjectPageInput,
  page: {
    title: string;
    /** A line above the form (the client's id, a provider's redirect URI), when the section has one. */
    about?: SafeHtml | '';
    form: SafeHtml;
    /** Its actions' buttons, for one that exists; undefined for a new one. */
    actions: ReadonlyArray<SafeHtml | ''> | undefined;
    /** What follows the buttons (a link to its events). */
    after?: SafeHtml | undefined;
  },
): string {
  const { t } = ui;
  const { actions } = page;
  return consolePage(ui, {
    section,
    title: page.title,
    admin: input.admin,
    body: html`${savedNotice(ui, input.saved)}
${problemAlert(ui, input.problem)}
${page.about === undefined ? '' : html`${page.about}\n`}${page.form}
${
  actions
    ? html`<h2>${t.t('admin.client.actions')}</h2>
<div class="actions">
${actions.map((button, i) => html`${i > 0 ? '\n' : ''}${button}`)}
</div>${page.after ? html`\n${page.after}` : ''}`
    : ''
}`,
  });
}

/** A form posting to `action`, its first field the form token every console form carries. */
export function postForm(action: string, csrfToken: string, fields: SafeHtml): SafeHtml {
  return html`<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${csrfToken}">
${fields}
</form>`;
}

/** A button posting to `action` with the form token and nothing else (the action is in the path). */
export function actionButton(action: string, csrfToken: string, label: string, secondary = true): SafeHtml {
  return postForm(
    action,
    csrfToken,
    html`<button type="submit"${secondary ? html` class="secondary"` : ''}>${label}</button>`,
  );
}

/** A link to the next page of a list, when there is one: the same query, the cursor given. */
export function nextPageLink(ui: PageContext, path: string, query: Record<string, string>, cursor: string | null) {
  if (cursor === null) return '';
  const params = new URLSearchParams({ ...query, cursor });
  return html`<p><a href="${`${path}?${params}`}" rel="next">${ui.t.t('admin.nextPage')}</a></p>`;
}

/** The grace periods a secret's rotation offers, in seconds: none, an hour, a day, a week. */
export const GRACE_PERIODS: readonly number[] = [0, 3600, 86_400, 604_800];
const GRACE_LABELS = ['admin.grace.none', 'admin.grace.hour', 'admin.grace.day', 'admin.grace.week'] as const;

/** The field choosing how long a rotated secret's predecessor goes on (`grace`), `chosen` selected. */
export function graceField(ui: PageContext, label: string, chosen: number): SafeHtml {
  const options = GRACE_PERIODS.map(
    (seconds, i) =>
      html`<option value="${seconds}"${seconds === chosen ? html` selected` : ''}>${ui.t.t(GRACE_LABELS[i]!)}</option>`,
  );
  return html`<label for="grace">${label}</label>
<select id="grace" name="grace">${options}</select>`;
}

/** The sections that show a secret once: the element holding it, and their words around it. */
const SECRET_TEXTS = {
  clients: { id: 'client-secret', previous: 'admin.client.previousUntil', back: 'admin.client.back' },
  webhooks: { id: 'webhook-secret', previous: 'admin.webhook.previousUntil', back: 'admin.webhook.back' },
} as const satisfies Record<string, { id: string; previous: MessageKey; back: MessageKey }>;

/** A secret to show once, and after a rotation with a grace until when the previous one goes on. */
export interface ShownSecret {
  admin: string;
  secret: string;
  previousUntil: number | null;
}

/**
 * The page that shows a new secret this once (it is kept hashed or sealed, never shown again): what
 * was done (`status`), what the previous secret still does, and the way back to the object.
 */
export function secretPage(
  ui: PageContext,
  section: keyof typeof SECRET_TEXTS,
  input: ShownSecret,
  page: { title: string; status: string; about?: SafeHtml; back: string },
): string {
  const { t } = ui;
  const texts = SECRET_TEXTS[section];
  const until = input.previousUntil;
  return consolePage(ui, {
    section,
    title: page.title,
    admin: input.admin,
    body: html`<p role="status">${page.status}</p>
${page.about ?? ''}
${until === null ? '' : html`<p>${t.t(texts.previous, { at: t.dateTime(until) })}</p>`}
<p>${t.t('admin.client.secretOnce')}</p>
<pre id="${texts.id}">${input.secret}</pre>
<p><a href="${page.back}">${t.t(texts.back)}</a></p>`,
  });
}
