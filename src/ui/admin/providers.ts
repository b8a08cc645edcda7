// The console's upstream providers (OpenID Connect, GitHub): the list, a form to add one or change it
// (its client secret going in, never shown back), the redirect URI to register at the provider, and
// its deletion.
import type { UpstreamProvider } from '../../store/upstream.ts';
import { html } from '../html.ts';
import type { PageContext } from '../layout.ts';
import type { Column, Listing, ObjectPageInput } from './console.ts';
import { actionButton, listingPage, objectPage, postForm } from './console.ts';

/** The list's columns. */
const COLUMNS: ReadonlyArray<Column<UpstreamProvider>> = [
  ['admin.client.name', (p) => html`<a href="/admin/providers/${p.id}">${p.name}</a>`],
  ['admin.provider.id', (p) => html`<code>${p.id}</code>`],
  ['admin.provider.issuer', (p) => (p.type === 'oidc' ? p.issuer : (p.githubUrl ?? 'https://github.com'))],
];

export function providersPage(ui: PageContext, input: Listing<UpstreamProvider>): string {
  const deleted = input.deleted && ui.t.t('admin.provider.deleted', { id: input.deleted });
  return listingPage(ui, 'providers', COLUMNS, { ...input, deleted });
}

/** What the form holds: a provider's values (never its secret), or what was posted and refused. */
export interface ProviderFields {
  type: 'oidc' | 'github';
  id: string;
  name: string;
  issuer: string;
  githubUrl: string;
  clientId: string;
  scope: string;
  trustEmail: boolean;
  linkOnly: boolean;
  allowPrivateNetwork: boolean;
  trustUpstreamMfa: boolean;
  acceptIdJag: boolean;
  /** The email domains whose login_hint goes straight to it, space-separated. */
  hintDomains: string;
}

export const providerFieldsOf = (p: UpstreamProvider): ProviderFields => ({
  type: p.type,
  id: p.id,
  name: p.name,
  issuer: p.issuer ?? '',
  githubUrl: p.githubUrl ?? '',
  clientId: p.clientId,
  scope: p.scopes.join(' '),
  trustEmail: p.trustEmail,
  linkOnly: p.linkOnly,
  allowPrivateNetwork: p.allowPrivateNetwork,
  trustUpstreamMfa: p.trustUpstreamMfa,
  acceptIdJag: p.acceptIdJag,
  hintDomains: p.loginHintDomains.join(' '),
});

export interface ProviderPageInput extends ObjectPageInput {
  /** The provider edited, and the redirect URI to register for it; absent for a new one. */
  provider?: UpstreamProvider | undefined;
  callbackUri?: string | undefined;
  fields: ProviderFields;
}

/** The yes-or-no settings: the field, the form's name, the label, and whether GitHub has it. */
const FLAGS = [
  ['trustEmail', 'trust_email', 'admin.provider.trustEmail', true],
  ['linkOnly', 'link_only', 'admin.provider.linkOnly', true],
  ['allowPrivateNetwork', 'allow_private_network', 'admin.provider.allowPrivate', true],
  // GitHub says neither how a person signed in nor signs identity assertions: OpenID Connect only.
  ['trustUpstreamMfa', 'trust_upstream_mfa', 'admin.provider.trustMfa', false],
  ['acceptIdJag', 'accept_id_jag', 'admin.provider.acceptIdJag', false],
] as const;

export function providerPage(ui: PageContext, input: ProviderPageInput): string {
  const { t } = ui;
  const { provider, fields } = input;
  const text = (id: string, label: string, value: string, required = false) =>
    html`<label for="${id}">${label}</label>
<input type="text" id="${id}" name="${id}" value="${value}" spellcheck="false"${required ? html` required` : ''}>`;
  const option = (type: 'oidc' | 'github', label: string) =>
    html`<option value="${type}"${fields.type === type ? html` selected` : ''}>${label}</option>`;
  const identity = provider
    ? html`<p>${t.t('admin.provider.id')}: <code>${provider.id}</code></p>`
    : html`<label for="type">${t.t('admin.provider.type')}</label>
<select id="type" name="type">${option('oidc', 'OpenID Connect')}${option('github', 'GitHub')}</select>
${text('id', t.t('admin.provider.newId'), fields.id)}`;
  const action = provider ? `/admin/providers/${provider.id}` : '/admin/providers/new';
  const form = postForm(
    action,
    input.csrfToken,
    html`${identity}
${text('name', t.t('admin.client.name'), fields.name)}
${provider?.type === 'github' ? '' : text('issuer', t.t('admin.provider.issuer'), fields.issuer)}
${provider?.type === 'oidc' ? '' : text('github_url', t.t('admin.provider.githubUrl'), fields.githubUrl)}
${text('client_id', t.t('admin.provider.clientId'), fields.clientId, true)}
<label for="client_secret">${t.t(provider ? 'admin.provider.keepSecret' : 'admin.provider.clientSecret')}</label>
<input type="password" id="client_secret" name="client_secret" autocomplete="off"${provider ? '' : html` required`}>
${text('scope', t.t('admin.client.scopes'), fields.scope)}
${text('login_hint_domains', t.t('admin.provider.hintDomains'), fields.hintDomains)}
${FLAGS.filter(([, , , github]) => github || provider?.type !== 'github').map(
  ([
    key,
    name,
    label,
  ]) => html`<p><input type="checkbox" id="${name}" name="${name}" value="1"${fields[key] ? html` checked` : ''}>
<label for="${name}">${t.t(label)}</label></p>\n`,
)}<button type="submit">${t.t(provider ? 'admin.client.save' : 'admin.provider.create')}</button>`,
  );
  return objectPage(ui, 'providers', input, {
    title: provider ? t.t('admin.provider.title', { name: provider.name }) : t.t('admin.providers.new'),
    about: input.callbackUri ? html`<p>${t.html('admin.provider.callback', { uri: input.callbackUri })}</p>` : '',
    form,
    actions: provider && [
      actionButton(`/admin/providers/${provider.id}/delete`, input.csrfToken, t.t('admin.provider.delete')),
    ],
  });
}
