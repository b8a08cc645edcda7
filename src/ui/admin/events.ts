// The console's event log: a filter (a GET form: type, user, client) and the events it matches,
// newest first, a page at a time, each with who acted (`actor`) for an operator's change.
import { EVENT_TYPES, type SecurityEvent } from '../../events/index.ts';
import { html } from '../html.ts';
import type { PageContext } from '../layout.ts';
import { consolePage, dataTable, nextPageLink } from './console.ts';

export interface EventsFilter {
  type: string;
  user: string;
  client: string;
}

export function eventsPage(
  ui: PageContext,
  input: {
    admin: string;
    filter: EventsFilter;
    events: SecurityEvent[];
    /** Usernames of the users the events name (by id), for reading. */
    usernames: ReadonlyMap<string, string>;
    nextCursor: string | null;
    /** The username filtered by, when no user has it. */
    unknownUser?: string | undefined;
  },
): string {
  const { t } = ui;
  const { filter } = input;
  const who = (id: string | null) => (id === null ? '' : (input.usernames.get(id) ?? id));
  const actor = (value: string | null) =>
    value?.startsWith('user:') ? `${value} (${who(value.slice(5))})` : (value ?? '');
  const rows = input.events.map((e) => [
    t.dateTime(e.at),
    html`<code>${e.type}</code>`,
    who(e.userId),
    e.clientId ?? '',
    actor(e.actor),
    e.ip ?? '',
  ]);
  const query = Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== ''));
  return consolePage(ui, {
    section: 'events',
    title: t.t('admin.events.title'),
    admin: input.admin,
    body: html`<form method="get" action="/admin/events">
<label for="type">${t.t('admin.events.type')}</label>
<select id="type" name="type">
<option value="">${t.t('admin.events.anyType')}</option>
${EVENT_TYPES.map((type) => html`<option${type === filter.type ? html` selected` : ''}>${type}</option>\n`)}</select>
<label for="user">${t.t('admin.events.user')}</label>
<input type="text" id="user" name="user" value="${filter.user}" autocapitalize="none" spellcheck="false">
<label for="client">${t.t('admin.events.client')}</label>
<input type="text" id="client" name="client" value="${filter.client}" autocapitalize="none" spellcheck="false">
<button type="submit">${t.t('admin.events.filter')}</button>
</form>
${
  input.unknownUser === undefined
    ? ''
    : html`<p class="alert" role="alert">${t.t('admin.events.noUser', { username: input.unknownUser })}</p>`
}
${dataTable(
  t.t('admin.events.none'),
  [
    t.t('admin.events.at'),
    t.t('admin.events.event'),
    t.t('admin.events.user'),
    t.t('admin.events.client'),
    t.t('admin.events.actor'),
    t.t('admin.events.address'),
  ],
  rows,
)}
${nextPageLink(ui, '/admin/events', query, input.nextCursor)}`,
  });
}
