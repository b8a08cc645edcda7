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
import { checkIfMatch, etagOf } from './etag.ts';
import { ETAG_HEADER, IF_MATCH, problems } from './schemas.ts';

type ById = { Params: { id: string } };

const string = { type: 'string', maxLength: 2048 } as const;
const strings = { type: 'array', items: { type: 'string' } } as const;
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
    trust_email: { type: 'boolean' },
    link_only: { type: 'boolean' },
    trust_upstream_mfa: { type: 'boolean' },
    allow_private_network: { type: 'boolean' },
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
  trust_email: { type: 'boolean' },
  link_only: { type: 'boolean' },
  trust_upstream_mfa: { type: 'boolean' },
  allow_private_network: { type: 'boolean' },
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

const one = (description: string) => ({
  description,
  headers: ETAG_HEADER,
  content: { 'application/json': { schema: PROVIDER } },
});

export function providerRoutes(app: FastifyInstance, api: AdminApi): void {
  const tags = ['providers'];
  const deps = { config: api.config, secret: api.secret };
  const show = async (provider: UpstreamProvider) =>
    describeProvider(provider, api.config, await api.store.countLinks(provider.id));

  app.get(
    '/providers',
    {
      schema: {
        tags,
        summary: 'The upstream providers',
        response: {
          200: {
            type: 'object',
            required: ['items'],
            additionalProperties: false,
            properties: { items: { type: 'array', items: PROVIDER } },
          },
          ...problems(),
        },
      },
    },
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
        response: { 201: one('added'), ...problems(400, 409, 415, 502) },
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

  app.get<ById>(
    '/providers/:id',
    {
      schema: {
        tags,
        summary: 'A provider (never its client secret), with the accounts linked to it',
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
        response: { 200: one('the provider'), ...problems(404) },
      },
    },
    async (request, reply) => {
      const shown = await show(await findProvider(api.store, request.params.id));
      return reply.header('etag', etagOf(shown)).send(shown);
    },
  );

  const PATCH = {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { ...SETTINGS, keep_links: { type: 'boolean', description: 'moved, and the same provider' } },
  };
  app.patch<ById & { Body: Settings & { keep_links?: boolean } }>(
    '/providers/:id',
    {
      schema: {
        tags,
        summary: 'Change a provider (a JSON merge patch); moving one with linked accounts needs keep_links',
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
        headers: IF_MATCH,
        body: { content: { 'application/merge-patch+json': { schema: PATCH }, 'application/json': { schema: PATCH } } },
        response: { 200: one('changed'), ...problems(400, 404, 409, 412, 415, 502) },
      },
    },
    async (request, reply) => {
      const current = await findProvider(api.store, request.params.id);
      checkIfMatch(request, await show(current));
      const options = { ...api.options(request), check: request.body.check, keepLinks: request.body.keep_links };
      const { provider } = await updateProvider(api.store, deps, current.id, settingsOf(request.body), options);
      const shown = await show(provider);
      return reply.header('etag', etagOf(shown)).send(shown);
    },
  );

  app.delete<ById>(
    '/providers/:id',
    {
      schema: {
        tags,
        summary: 'Delete a provider: its button and sign-ins stop, and the accounts linked to it go',
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
        headers: IF_MATCH,
        response: { 204: { description: 'deleted', type: 'null' }, ...problems(404, 412) },
      },
    },
    async (request, reply) => {
      const current = await findProvider(api.store, request.params.id);
      checkIfMatch(request, await show(current));
      await deleteProvider(api.store, current.id, api.options(request));
      return reply.code(204).send();
    },
  );
}
