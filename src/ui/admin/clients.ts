// The console's clients: the list, a form to create one or edit its name, redirect URIs, scopes and
// grant types, its secret rotated (the new one shown once), and its deletion.
import type { Client } from '../../store/clients.ts';
import { html, type SafeHtml } from '../html.ts';
import type { PageContext } from '../layout.ts';
import type { Column, Listing, ObjectPageInput } from './console.ts';
import { actionButton, graceField, listingPage, objectPage, postForm, secretPage } from './console.ts';

const pathOf = (client: Client) => `/admin/clients/${encodeURIComponent(client.clientId)}`;

/** The list's columns. */
const COLUMNS: ReadonlyArray<Column<Client>> = [
  ['admin.client.name', (client) => html`<a href="${pathOf(client)}">${client.name}</a>`],
  ['admin.clients.id', (client) => html`<code>${client.clientId}</code>`],
  ['admin.client.grantTypes', (client) => client.grantTypes.join(', ')],
];

export function clientsPage(ui: PageContext, input: Listing<Client>): string {
  const deleted = input.deleted && ui.t.t('admin.client.deleted', { name: input.deleted });
  return listingPage(ui, 'clients', COLUMNS, { ...input, deleted });
}

/** What the form holds: a client's values, or what was posted and refused. */
export interface ClientFields {
  name: string;
  redirectUris: string;
  scopes: string;
  grantTypes: string[];
  public: boolean;
}

export const fieldsOf = (client: Client): ClientFields => ({
  name: client.name,
  redirectUris: client.redirectUris.join('\n'),
  scopes: client.scopes.join(' '),
  grantTypes: client.grantTypes,
  public: client.tokenEndpointAuthMethod === 'none',
});

function clientForm(
  ui: PageContext,
  input: {
    action: string;
    csrfToken: string;
    fields: ClientFields;
    grantTypes: readonly string[];
    creating: boolean;
    submit: string;
  },
): SafeHtml {
  const { t } = ui;
  const { fields } = input;
  return postForm(
    input.action,
    input.csrfToken,
    html`<label for="name">${t.t('admin.client.name')}</label>
<input type="text" id="name" name="name" value="${fields.name}" required>
<label for="redirect_uris">${t.t('admin.client.redirectUris')}</label>
<textarea id="redirect_uris" name="redirect_uris" rows="3" spellcheck="false">${fields.redirectUris}</textarea>
<label for="scopes">${t.t('admin.client.scopes')}</label>
<input type="text" id="scopes" name="scopes" value="${fields.scopes}" spellcheck="false" required>
<fieldset>
<legend>${t.t('admin.client.grantTypes')}</legend>
${input.grantTypes.map((grant) => {
  const checked = fields.grantTypes.includes(grant) ? html` checked` : '';
  return html`<input type="checkbox" id="grant-${grant}" name="grant_types" value="${grant}"${checked}>
<label for="grant-${grant}">${grant}</label>\n`;
})}</fieldset>
${
  input.creating
    ? html`<p><input type="checkbox" id="public" name="public" value="1"${fields.public ? html` checked` : ''}>
<label for="public">${t.t('admin.client.public')}</label></p>`
    : ''
}
<button type="submit">${input.submit}</button>`,
  );
}

export interface ClientPageInput extends ObjectPageInput {
  /** The client edited; absent for a new one. */
  client?: Client | undefined;
  fields: ClientFields;
  /** The grant types a client may have, one checkbox each (src/admin/client-rules.ts). */
  grantTypes: readonly string[];
}

export function clientPage(ui: PageContext, input: ClientPageInput): string {
  const { t } = ui;
  const { client } = input;
  const base = client ? pathOf(client) : '/admin/clients';
  const form = clientForm(ui, {
    action: client ? base : '/admin/clients/new',
    csrfToken: input.csrfToken,
    fields: input.fields,
    grantTypes: input.grantTypes,
    creating: !client,
    submit: t.t(client ? 'admin.client.save' : 'admin.client.create'),
  });
  const eventsOf = (c: Client) => `/admin/events?${new URLSearchParams({ client: c.clientId })}`;
  const hasSecret = client && client.tokenEndpointAuthMethod !== 'none' && client.secretHash !== null;
  return objectPage(ui, 'clients', input, {
    title: client ? t.t('admin.client.title', { name: client.name }) : t.t('admin.clients.new'),
    about: client ? html`<p>${t.html('admin.client.id', { clientId: client.clientId })}</p>` : '',
    form,
    actions: client && [
      hasSecret
        ? postForm(
            `${base}/rotate-secret`,
            input.csrfToken,
            html`${graceField(ui, t.t('admin.client.grace'), 0)}
<button type="submit" class="secondary">${t.t('admin.client.rotate')}</button>`,
          )
        : '',
      actionButton(`${base}/delete`, input.csrfToken, t.t('admin.client.delete')),
    ],
    after: client && html`<p><a href="${eventsOf(client)}">${t.t('admin.client.events')}</a></p>`,
  });
}

/**
 * A client's secret, new: shown this once (it is kept hashed). `previousUntil`: after a rotation with
 * a grace, until when the previous secret works too.
 */
export function clientSecretPage(
  ui: PageContext,
  input: { admin: string; client: Client; secret: string; created: boolean; previousUntil: number | null },
): string {
  const { t } = ui;
  return secretPage(ui, 'clients', input, {
    title: t.t('admin.client.secretTitle', { name: input.client.name }),
    status: t.t(input.created ? 'admin.client.created' : 'admin.client.rotated'),
    about: html`<p>${t.html('admin.client.id', { clientId: input.client.clientId })}</p>`,
    back: pathOf(input.client),
  });
}
