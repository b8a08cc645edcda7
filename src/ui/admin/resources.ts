// The console's APIs (RFC 8707 resources): the list, a form to register one or change its name and
// the API scopes it accepts, and its deletion.
import type { Resource } from '../../store/resources.ts';
import { html } from '../html.ts';
import type { PageContext } from '../layout.ts';
import type { Column, Listing, ObjectPageInput } from './console.ts';
import { actionButton, listingPage, objectPage, postForm } from './console.ts';

const pathOf = (uri: string) => `/admin/resources/${encodeURIComponent(uri)}`;

/** The list's columns. */
const COLUMNS: ReadonlyArray<Column<Resource>> = [
  ['admin.client.name', (resource) => html`<a href="${pathOf(resource.uri)}">${resource.name}</a>`],
  ['admin.resources.uri', (resource) => html`<code>${resource.uri}</code>`],
  ['admin.client.scopes', (resource) => html`<code>${resource.scopes.join(' ')}</code>`],
];

export function resourcesPage(ui: PageContext, input: Listing<Resource>): string {
  const deleted = input.deleted && ui.t.t('admin.resource.deleted', { uri: input.deleted });
  return listingPage(ui, 'resources', COLUMNS, { ...input, deleted });
}

/** What the form holds: a resource's values, or what was posted and refused. */
export interface ResourceFields {
  uri: string;
  name: string;
  scope: string;
}

export const resourceFieldsOf = (resource: Resource): ResourceFields => ({
  uri: resource.uri,
  name: resource.name,
  scope: resource.scopes.join(' '),
});

export interface ResourcePageInput extends ObjectPageInput {
  /** The resource edited; absent for a new one. */
  resource?: Resource | undefined;
  fields: ResourceFields;
}

export function resourcePage(ui: PageContext, input: ResourcePageInput): string {
  const { t } = ui;
  const { resource, fields } = input;
  const uri = resource
    ? html`<p>${t.t('admin.resources.uri')}: <code>${resource.uri}</code></p>`
    : html`<label for="uri">${t.t('admin.resources.uri')}</label>
<input type="url" id="uri" name="uri" value="${fields.uri}" spellcheck="false" required>`;
  const form = postForm(
    resource ? pathOf(resource.uri) : '/admin/resources/new',
    input.csrfToken,
    html`${uri}
<label for="name">${t.t('admin.resource.name')}</label>
<input type="text" id="name" name="name" value="${fields.name}"${resource ? html` required` : ''}>
<label for="scope">${t.t('admin.client.scopes')}</label>
<input type="text" id="scope" name="scope" value="${fields.scope}" spellcheck="false" required>
<button type="submit">${t.t(resource ? 'admin.client.save' : 'admin.resource.create')}</button>`,
  );
  return objectPage(ui, 'resources', input, {
    title: resource ? t.t('admin.resource.title', { name: resource.name }) : t.t('admin.resources.new'),
    form,
    actions: resource && [
      actionButton(`${pathOf(resource.uri)}/delete`, input.csrfToken, t.t('admin.resource.delete')),
    ],
  });
}
