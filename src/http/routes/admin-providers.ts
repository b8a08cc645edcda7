// The admin console's upstream providers (src/ui/admin/providers.ts): the list, a new one (OpenID
// Connect or GitHub, as `tessera providers create` takes them), one changed, and its deletion, which
// asks for a recent sign-in. Each is one of the operations the CLI and the admin API call
// (src/admin/providers.ts), recorded with the admin as its actor; an OpenID Connect provider's
// discovery document is read before it is stored, and one that cannot be read is said on the form.
// The routes are those every section has (./admin-section.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AdminError } from '../../admin/errors.ts';
import { createProvider, deleteProvider, UpstreamCheckError, updateProvider } from '../../admin/providers.ts';
import type { UpstreamProvider } from '../../store/upstream.ts';
import { type ProviderFields, providerFieldsOf, providerPage, providersPage } from '../../ui/admin/providers.ts';
import { callbackUri } from '../../upstream/index.ts';
import { ProviderInputError, type ProviderSettings } from '../../upstream/providers.ts';
import type { RouteContext } from '../context.ts';
import { formValue } from '../forms.ts';
import { byName, objectSectionRoutes } from './admin-section.ts';

/** The form's fields as posted. */
function postedFields(request: FastifyRequest): ProviderFields {
  const value = (name: string) => (formValue(request, name) ?? '').trim();
  return {
    type: value('type') === 'github' ? 'github' : 'oidc',
    id: value('id'),
    name: value('name'),
    issuer: value('issuer'),
    githubUrl: value('github_url'),
    clientId: value('client_id'),
    scope: value('scope'),
    trustEmail: value('trust_email') === '1',
    linkOnly: value('link_only') === '1',
    allowPrivateNetwork: value('allow_private_network') === '1',
    trustUpstreamMfa: value('trust_upstream_mfa') === '1',
    acceptIdJag: value('accept_id_jag') === '1',
    hintDomains: value('login_hint_domains'),
  };
}

/**
 * The settings the operations take: a field left empty is one not given (its default, or unchanged),
 * but for the login hint domains, which the form shows as they are: emptied, there are none.
 */
function settingsOf(fields: ProviderFields, clientSecret: string): ProviderSettings {
  const given = (value: string) => (value === '' ? undefined : value);
  return {
    name: given(fields.name),
    issuer: given(fields.issuer),
    githubUrl: given(fields.githubUrl),
    clientId: given(fields.clientId),
    clientSecret: given(clientSecret),
    scopes: given(fields.scope)?.split(/\s+/),
    trustEmail: fields.trustEmail,
    linkOnly: fields.linkOnly,
    allowPrivateNetwork: fields.allowPrivateNetwork,
    trustUpstreamMfa: fields.trustUpstreamMfa,
    acceptIdJag: fields.acceptIdJag,
    loginHintDomains: fields.hintDomains.split(/[\s,]+/).filter((domain) => domain !== ''),
  };
}

/** A value the operations refuse, or a provider they cannot read: said on the form. */
const refusal = (err: unknown): err is Error =>
  err instanceof AdminError || err instanceof ProviderInputError || err instanceof UpstreamCheckError;

export function adminProviderRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const deps = { config: ctx.config, secret: ctx.mail.secret };
  const clientSecret = (request: FastifyRequest) => formValue(request, 'client_secret') ?? '';

  objectSectionRoutes<UpstreamProvider, ProviderFields>(app, ctx, {
    path: '/admin/providers',
    list: async () => (await ctx.store.listProviders()).sort(byName),
    listPage: (listing) => (ui) => providersPage(ui, listing),
    find: (id) => ctx.store.getProvider(id),
    pathOf: (provider) => `/admin/providers/${provider.id}`,
    blank: {
      ...{ type: 'oidc', id: '', name: '', issuer: '', githubUrl: '', clientId: '', scope: '' },
      ...{
        trustEmail: false,
        linkOnly: false,
        allowPrivateNetwork: false,
        trustUpstreamMfa: false,
        acceptIdJag: false,
      },
      hintDomains: '',
    },
    fieldsOf: providerFieldsOf,
    // A change keeps the provider's type and id, whatever was posted.
    posted: (request, provider) => ({
      ...postedFields(request),
      ...(provider && { type: provider.type, id: provider.id }),
    }),
    formPage: ({ item, ...input }) => {
      const callback = item && callbackUri(ctx.config.issuer, item.id);
      return (ui) => providerPage(ui, { ...input, provider: item, callbackUri: callback });
    },
    refuses: refusal,
    create: async (fields, request, current) => {
      const settings = { ...settingsOf(fields, clientSecret(request)), type: fields.type };
      const options = { now: current.now, requester: current.requester };
      const { provider } = await createProvider(ctx.store, deps, { ...settings, id: fields.id || undefined }, options);
      return { location: `/admin/providers/${provider.id}?saved=1` };
    },
    update: async (provider, fields, request, current) => {
      const settings = settingsOf(fields, clientSecret(request));
      const options = { now: current.now, requester: current.requester };
      await updateProvider(ctx.store, deps, provider.id, settings, options);
    },
    remove: async (provider, current) => {
      await deleteProvider(ctx.store, provider.id, { now: current.now, requester: current.requester });
      return provider.id;
    },
    deleteAsksRecentSignIn: true,
  });
}
