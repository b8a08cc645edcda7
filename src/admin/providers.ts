// The operator's operations on upstream providers (`tessera providers …`, the admin API): create,
// change and delete one, each checked as the server will use it (its discovery document read now,
// rather than at a sign-in) and recorded with its event. A setting refused is a ProviderInputError
// (src/upstream/providers.ts); a provider that cannot be read, an UpstreamCheckError.
import type { Config } from '../config/index.ts';
import { CLI, type Requester, securityEvent } from '../events/index.ts';
import type { UpstreamProvider, UpstreamStore } from '../store/upstream.ts';
import type { Secrets } from '../tokens/secrets.ts';
import { asUpstreamError } from '../upstream/errors.ts';
import { withinDeadline } from '../upstream/fetch.ts';
import { callbackUri } from '../upstream/index.ts';
import { OidcConfigurations } from '../upstream/oidc.ts';
import { changedProvider, newProvider, ProviderInputError, type ProviderSettings } from '../upstream/providers.ts';
import { openClientSecret } from '../upstream/secrets.ts';
import { ConflictError, found, NotFoundError } from './errors.ts';

/** The provider's discovery document could not be read: the settings may be right and the provider down. */
export class UpstreamCheckError extends Error {
  override name = 'UpstreamCheckError';
}

interface Options {
  now: number;
  requester?: Requester | undefined;
  /** Read the discovery document first (true unless the operator says `--no-check`). */
  check?: boolean | undefined;
}

type Deps = { config: Config; secret: Secrets };

/** A provider as `--json` and the API show it, never its client secret; `links`: the accounts linked. */
export function describeProvider(provider: UpstreamProvider, config: Pick<Config, 'issuer'>, links?: number) {
  const iso = (at: number) => new Date(at * 1000).toISOString();
  return {
    id: provider.id,
    type: provider.type,
    name: provider.name,
    ...(provider.type === 'oidc'
      ? { issuer: provider.issuer }
      : { github_url: provider.githubUrl, github_api_url: provider.githubApiUrl }),
    client_id: provider.clientId,
    scope: provider.scopes.join(' '),
    trust_email: provider.trustEmail,
    link_only: provider.linkOnly,
    trust_upstream_mfa: provider.trustUpstreamMfa,
    allow_private_network: provider.allowPrivateNetwork,
    login_hint_domains: provider.loginHintDomains,
    ...(provider.type === 'oidc' ? { accept_id_jag: provider.acceptIdJag } : {}),
    callback_uri: callbackUri(config.issuer, provider.id),
    ...(links === undefined ? {} : { linked_accounts: links }),
    created_at: iso(provider.createdAt),
    updated_at: iso(provider.updatedAt),
  };
}

export async function findProvider(store: Pick<UpstreamStore, 'getProvider'>, id: string) {
  return found(await store.getProvider(id), `no provider ${id}`);
}

/** A provider shown on its own (`providers show`, the API's one provider): with the accounts linked to it. */
export async function describeLinkedProvider(
  store: Pick<UpstreamStore, 'countLinks'>,
  config: Pick<Config, 'issuer'>,
  provider: UpstreamProvider,
) {
  return describeProvider(provider, config, await store.countLinks(provider.id));
}

/**
 * Reads an OpenID Connect provider's discovery document as the server will (the same guard and time
 * limit): its authorization endpoint, or an UpstreamCheckError saying why not. Nothing for GitHub.
 */
export async function checkDiscovery(provider: UpstreamProvider, { config, secret }: Deps): Promise<string | null> {
  if (provider.type !== 'oidc') return null;
  const network = { allowPrivate: config.outboundAllowPrivate, timeoutMs: config.upstream.timeoutMs };
  try {
    const clientSecret = openClientSecret(provider.clientSecretEnc, secret);
    const discovered = await withinDeadline(provider, network, () =>
      new OidcConfigurations().get(provider, clientSecret, network.allowPrivate),
    );
    return String(discovered.serverMetadata().authorization_endpoint);
  } catch (err) {
    const why = asUpstreamError(err).message;
    throw new UpstreamCheckError(
      `the discovery document of ${provider.issuer} could not be read (${why}); check --issuer` +
        (provider.allowPrivateNetwork ? '' : ' (and --allow-private-network for a provider inside your network)') +
        ', or add --no-check (the API\'s "check": false) to store it anyway',
      { cause: err },
    );
  }
}

/** A new provider (`provider.created`): its settings checked, its discovery document read unless `check` is false. */
export async function createProvider(
  store: UpstreamStore,
  deps: Deps,
  settings: ProviderSettings & { type: 'oidc' | 'github'; id?: string | undefined },
  options: Options,
): Promise<{ provider: UpstreamProvider; authorizationEndpoint: string | null }> {
  const { now, requester = CLI, check = true } = options;
  if (settings.clientId === undefined) throw new ProviderInputError('--client-id is required');
  if (settings.clientSecret === undefined) throw new ProviderInputError('a client secret is required');
  const context = { secret: deps.secret, allowHttp: deps.config.outboundAllowPrivate, now };
  const provider = newProvider(settings, context);
  const authorizationEndpoint = check ? await checkDiscovery(provider, deps) : null;
  const data = { provider: provider.id, type: provider.type, name: provider.name };
  if (!(await store.createProvider(provider, securityEvent('provider.created', now, { requester, data }))))
    throw new ConflictError(`a provider ${provider.id} exists already (choose another id)`);
  return { provider, authorizationEndpoint };
}

/**
 * Changes a provider (`provider.updated`). People are linked by their subject at the provider: at
 * another issuer (another GitHub) the same subject may be someone else, so moving a provider with
 * linked accounts needs `keepLinks`, the operator's word that it is the same provider at a new address.
 */
export async function updateProvider(
  store: UpstreamStore,
  deps: Deps,
  id: string,
  settings: ProviderSettings,
  options: Options & { keepLinks?: boolean | undefined },
): Promise<{ provider: UpstreamProvider; authorizationEndpoint: string | null }> {
  const { now, requester = CLI, check = true } = options;
  const provider = await findProvider(store, id);
  const updated = changedProvider(provider, settings, {
    secret: deps.secret,
    allowHttp: deps.config.outboundAllowPrivate,
    now,
  });
  const elsewhere = ['issuer', 'githubUrl', 'githubApiUrl'] as const;
  const links = await store.countLinks(provider.id);
  if (elsewhere.some((key) => updated[key] !== provider[key]) && links > 0 && !options.keepLinks) {
    throw new ConflictError(
      `${links} people are linked to ${provider.id} by their subject there, which another provider may give ` +
        "to someone else: make a new provider, or keep the links (--keep-links, the API's keep_links) if this is " +
        'the same provider at a new address',
    );
  }
  const moved = updated.issuer !== provider.issuer || updated.clientId !== provider.clientId;
  const authorizationEndpoint = moved && check ? await checkDiscovery(updated, deps) : null;
  const data = { provider: provider.id, name: updated.name, secret_changed: settings.clientSecret !== undefined };
  await store.updateProvider(updated, securityEvent('provider.updated', now, { requester, data }));
  return { provider: updated, authorizationEndpoint };
}

/** Deletes a provider (`provider.deleted`): its button and sign-ins stop; the accounts linked: how many went. */
export async function deleteProvider(store: UpstreamStore, id: string, options: Options): Promise<number> {
  const { now, requester = CLI } = options;
  await findProvider(store, id);
  const links = await store.countLinks(id);
  const deleted = securityEvent('provider.deleted', now, { requester, data: { provider: id, links } });
  const removed = await store.deleteProvider(id, deleted);
  if (removed === undefined) throw new NotFoundError(`no provider ${id}`);
  return removed;
}
