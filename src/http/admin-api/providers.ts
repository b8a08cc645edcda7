// /admin/api/v1/providers: the upstream providers people may sign in with (OpenID Connect, GitHub),
// through the operations `tessera providers` calls (src/admin/providers.ts). The client secret goes in,
// never out; a provider's discovery document is read before it is stored, unless `check` is false.
import type { FastifyInstance } from 'fastify';
import {
  createProvider,
  deleteProvider,
  describeProvider,
  findProvider,
  updateProvider,
} from '../../admin/providers.ts';
import type { UpstreamProvider } from '../../store/upstream.ts';
import type { ProviderSettings } from '../../upstream/providers.ts';
import type { AdminApi } from './context.ts';
import { etagOf } from './etag.ts';
import { deleteRoute, objectKind, patchRoute, readRoute } from './object-routes.ts';
import { listOf, objectAnswer, problems } from './schemas.ts';

const string = { type: 'string', maxLength: 2048 } as const;
const strings = { type: 'array', items: { type: 'string' } } as const;
/** The yes/no settings, shown and taken alike. */
const FLAGS = {
  trust_email: { type: 'boolean' },
  link_only: { type: 'boolean' },
  trust_upstream_mfa: { type: 'boolean' },
  allow_private_network: { type: 'boolean' },
} as const;
const PROVIDER = {
  type: 'object',
  required: ['id', 'type', 'name', 'client_id', 'scope', 'callback_uri'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    type: { type: 'string', enum: ['oidc', 'github'] },
    name: { type: 'string' },
    issuer: { type: ['string', 'null'] },
    github_url: { type: ['string', 'null'] },
    github_api_url: { type: ['string', 'null'] },
    client_id: { type: 'string' },
    scope: { type: 'string' },
    ...FLAGS,
    login_hint_domains: strings,
    accept_id_jag: { type: 'boolean', description: 'its ID-JAGs are redeemed (the jwt-bearer grant)' },
    callback_uri: { type: 'string', description: 'the redirect URI to register at the provider' },
    linked_accounts: { type: 'integer' },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
  },
} as const;

/** What create and update take, as `tessera providers` options in snake_case. */
const SETTINGS = {
  name: { type: 'string', maxLength: 256 },
  issuer: string,
  client_id: string,
  client_secret: { ...string, description: 'never shown back' },
  scope: string,
  ...FLAGS,
  login_hint_domains: { ...strings, maxItems: 100 },
  accept_id_jag: { type: 'boolean' },
  github_url: string,
  github_api_url: string,
  check: { type: 'boolean', default: true, description: 'read the discovery document first' },
} as const;

interface Settings {
  name?: string;
  issuer?: string;
  client_id?: string;
  client_secret?: string;
  scope?: string;
  trust_email?: boolean;
  link_only?: boolean;
  trust_upstream_mfa?: boolean;
  allow_private_network?: boolean;
  login_hint_domains?: string[];
  accept_id_jag?: boolean;
  github_url?: string;
  github_api_url?: string;
  check: boolean;
}

function settingsOf(body: Settings): ProviderSettings {
  return {
    name: body.name,
    issuer: body.issuer,
    clientId: body.client_id,
    clientSecret: body.client_secret,
    scopes: body.scope?.split(' ').filter((s) => s !== ''),
    trustEmail: body.trust_email,
    linkOnly: body.link_only,
    trustUpstreamMfa: body.trust_upstream_mfa,
    allowPrivateNetwork: body.allow_private_network,
    loginHintDomains: body.login_hint_domains,
    acceptIdJag: body.accept_id_jag,
    githubUrl: body.github_url,
    githubApiUrl: body.github_api_url,
  };
}

export function providerRoutes(app: FastifyInstance, api: AdminApi): void {
  const tags = ['providers'];
  const deps = { config: api.config, secret: api.secret };
  const show = async (provider: UpstreamProvider) =>
    describeProvider(provider, api.config, await api.store.countLinks(provider.id));
  const providers = objectKind<UpstreamProvider, 'id'>('providers', 'id', PROVIDER, {
    find: (id) => findProvider(api.store, id),
    show,
  });

  app.get(
    '/providers',
    { schema: { tags, summary: 'The upstream providers', response: { 200: listOf(PROVIDER), ...problems() } } },
    async () => ({ items: (await api.store.listProviders()).map((p) => describeProvider(p, api.config)) }),
  );

  app.post<{ Body: Settings & { type: 'oidc' | 'github'; id?: string } }>(
    '/providers',
    {
      schema: {
        tags,
        summary: 'Add a provider (oidc with its issuer, or github); register its callback_uri there',
        body: {
          type: 'object',
          required: ['type', 'client_id', 'client_secret'],
          additionalProperties: false,
          properties: { ...SETTINGS, type: { type: 'string', enum: ['oidc', 'github'] }, id: { type: 'string' } },
        },
        response: { 201: objectAnswer('added', PROVIDER), ...problems(400, 409, 415, 502) },
      },
    },
    async (request, reply) => {
      const { type, id, check } = request.body;
      const settings = { ...settingsOf(request.body), type, id };
      const options = { ...api.options(request), check };
      const { provider } = await createProvider(api.store, deps, settings, options);
      const shown = await show(provider);
      return reply
        .code(201)
        .header('location', `${request.url}/${provider.id}`)
        .header('etag', etagOf(shown))
        .send(shown);
    },
  );

  readRoute(app, providers, {
    summary: 'A provider (never its client secret), with the accounts linked to it',
    description: 'the provider',
  });

  const PATCH = {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { ...SETTINGS, keep_links: { type: 'boolean', description: 'moved, and the same provider' } },
  };
  patchRoute<UpstreamProvider, 'id', Settings & { keep_links?: boolean }>(app, providers, {
    summary: 'Change a provider (a JSON merge patch); moving one with linked accounts needs keep_links',
    body: PATCH,
    problems: [400, 404, 409, 412, 415, 502],
    change: async (current, request) => {
      const options = { ...api.options(request), check: request.body.check, keepLinks: request.body.keep_links };
      return (await updateProvider(api.store, deps, current.id, settingsOf(request.body), options)).provider;
    },
  });

  deleteRoute(app, providers, {
    summary: 'Delete a provider: its button and sign-ins stop, and the accounts linked to it go',
    remove: (current, request) => deleteProvider(api.store, current.id, api.options(request)),
  });
}
