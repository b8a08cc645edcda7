// `tessera providers …`: the upstream providers people may sign in with (src/upstream), OpenID
// Connect providers and GitHub. `create` and `show` print the redirect (callback) URI to register at
// the provider; the client secret is read from standard input only and stored encrypted.
import { CLI, securityEvent } from '../../events/index.ts';
import type { Config } from '../../config/index.ts';
import { resolveSecret } from '../../config/secret.ts';
import type { UpstreamProvider, UpstreamStore } from '../../store/upstream.ts';
import { asUpstreamError } from '../../upstream/errors.ts';
import { withinDeadline } from '../../upstream/fetch.ts';
import { callbackUri } from '../../upstream/index.ts';
import { OidcConfigurations } from '../../upstream/oidc.ts';
import { changedProvider, newProvider, ProviderInputError, type ProviderSettings } from '../../upstream/providers.ts';
import { openClientSecret } from '../../upstream/secrets.ts';
import type { Secrets } from '../../tokens/secrets.ts';
import { UsageError } from '../operations.ts';
import { formatTime, type Io, NotFound, parse, printList, readPassword, requireOption } from './common.ts';
import { requirePositional } from './common.ts';

const TYPES = { oidc: 'OpenID Connect', github: 'GitHub' } as const;

function describe(provider: UpstreamProvider, config: Config, links?: number): Record<string, unknown> {
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
    created_at: formatTime(provider.createdAt),
    updated_at: formatTime(provider.updatedAt),
  };
}

/** The settings both create and update take. */
const SETTINGS = {
  name: { type: 'string' },
  issuer: { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret-stdin': { type: 'boolean' },
  scope: { type: 'string' },
  'trust-email': { type: 'boolean' },
  'link-only': { type: 'boolean' },
  'trust-upstream-mfa': { type: 'boolean' },
  'allow-private-network': { type: 'boolean' },
  'login-hint-domain': { type: 'string', multiple: true },
  'accept-id-jag': { type: 'boolean' },
  'github-url': { type: 'string' },
  'github-api-url': { type: 'string' },
  'no-check': { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

/** For update: each yes/no setting's --no- form. */
const NEGATIONS = {
  'no-trust-email': { type: 'boolean' },
  'no-link-only': { type: 'boolean' },
  'no-trust-upstream-mfa': { type: 'boolean' },
  'no-allow-private-network': { type: 'boolean' },
  'no-login-hint-domains': { type: 'boolean' },
  'no-accept-id-jag': { type: 'boolean' },
} as const;

type Values = {
  [K in keyof typeof SETTINGS | keyof typeof NEGATIONS]?: K extends 'login-hint-domain'
    ? string[]
    : string | boolean | undefined;
};

/** A yes/no setting: --x sets it, --no-x clears it, neither leaves it. */
function flag(values: Values, name: keyof typeof SETTINGS & string): boolean | undefined {
  const yes = values[name] === true;
  const no = values[`no-${name}` as keyof Values] === true;
  if (yes && no) throw new UsageError(`--${name} and --no-${name} contradict each other`);
  return yes ? true : no ? false : undefined;
}

async function settingsOf(values: Values, io: Io): Promise<ProviderSettings> {
  const text = (name: keyof typeof SETTINGS) => values[name] as string | undefined;
  const domains = values['no-login-hint-domains'] ? [] : values['login-hint-domain'];
  return {
    name: text('name'),
    issuer: text('issuer'),
    clientId: text('client-id'),
    clientSecret: values['client-secret-stdin'] ? await readPassword(io) : undefined,
    scopes: text('scope')
      ?.split(' ')
      .filter((s) => s !== ''),
    trustEmail: flag(values, 'trust-email'),
    linkOnly: flag(values, 'link-only'),
    trustUpstreamMfa: flag(values, 'trust-upstream-mfa'),
    allowPrivateNetwork: flag(values, 'allow-private-network'),
    loginHintDomains: domains,
    acceptIdJag: flag(values, 'accept-id-jag'),
    githubUrl: text('github-url'),
    githubApiUrl: text('github-api-url'),
  };
}

/**
 * Reads an OpenID Connect provider's discovery document as the server will (the same guard and time
 * limit), so that a mistyped issuer or an unreachable provider shows now rather than at a sign-in.
 */
async function checkDiscovery(provider: UpstreamProvider, config: Config, secret: Secrets, io: Io): Promise<void> {
  if (provider.type !== 'oidc') return;
  const network = { allowPrivate: config.outboundAllowPrivate, timeoutMs: config.upstream.timeoutMs };
  try {
    const clientSecret = openClientSecret(provider.clientSecretEnc, secret);
    const discovered = await withinDeadline(provider, network, () =>
      new OidcConfigurations().get(provider, clientSecret, network.allowPrivate),
    );
    io.out(`discovered ${provider.issuer}: authorization at ${discovered.serverMetadata().authorization_endpoint}`);
  } catch (err) {
    const why = asUpstreamError(err).message;
    // Exit code 1, not 2: the arguments may be right and the provider down.
    throw new Error(
      `the discovery document of ${provider.issuer} could not be read (${why}); check --issuer` +
        (provider.allowPrivateNetwork ? '' : ' (and --allow-private-network for a provider inside your network)') +
        ', or add --no-check to store it anyway',
      { cause: err },
    );
  }
}

function print(io: Io, described: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(described)) {
    io.out(`${key.padEnd(22)} ${Array.isArray(value) ? value.join(' ') : String(value)}`);
  }
}

export async function providersCommand(store: UpstreamStore, config: Config, args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  const now = Math.floor(Date.now() / 1000);
  const secret = await resolveSecret(config);
  const context = { secret, allowHttp: config.outboundAllowPrivate, now };
  const find = async (id: string) => {
    const provider = await store.getProvider(id);
    if (!provider) throw new NotFound(`no provider ${id}`);
    return provider;
  };
  try {
    switch (sub) {
      case 'create': {
        const { values } = parse(rest, { ...SETTINGS, type: { type: 'string' }, id: { type: 'string' } });
        const type = requireOption(values.type, '--type');
        if (type !== 'oidc' && type !== 'github') throw new UsageError('--type: oidc or github');
        requireOption(values['client-id'], '--client-id');
        if (!values['client-secret-stdin']) {
          throw new UsageError('the client secret is read from standard input: add --client-secret-stdin');
        }
        const provider = newProvider({ ...(await settingsOf(values, io)), type, id: values.id }, context);
        if (!values['no-check']) await checkDiscovery(provider, config, secret, io);
        const data = { provider: provider.id, type, name: provider.name };
        if (!(await store.createProvider(provider, securityEvent('provider.created', now, { requester: CLI, data })))) {
          throw new UsageError(`a provider ${provider.id} exists already (choose another with --id)`);
        }
        if (values.json) io.out(JSON.stringify(describe(provider, config), null, 2));
        else {
          const where = provider.type === 'oidc' ? `, ${provider.issuer}` : '';
          io.out(`created provider ${provider.id} (${TYPES[type]}${where}), its button says "${provider.name}"`);
          io.out(`Register this redirect URI at the provider: ${callbackUri(config.issuer, provider.id)}`);
        }
        return 0;
      }
      case 'list': {
        const { values } = parse(rest, { json: { type: 'boolean' } });
        const describeProvider = (p: UpstreamProvider) => describe(p, config);
        printList(io, values.json, await store.listProviders(), describeProvider, 'no providers', (p) => {
          return `${p.id.padEnd(20)}  ${p.type.padEnd(6)}  ${p.name}`;
        });
        return 0;
      }
      case 'show': {
        const { values, positionals } = parse(rest, { json: { type: 'boolean' } }, 1);
        const provider = await find(requirePositional(positionals, 'the provider id'));
        const described = describe(provider, config, await store.countLinks(provider.id));
        if (values.json) io.out(JSON.stringify(described, null, 2));
        else print(io, described);
        return 0;
      }
      case 'update': {
        const { values, positionals } = parse(
          rest,
          { ...SETTINGS, ...NEGATIONS, 'keep-links': { type: 'boolean' } },
          1,
        );
        const provider = await find(requirePositional(positionals, 'the provider id'));
        const updated = changedProvider(provider, await settingsOf(values, io), context);
        // People are linked by their subject at this provider: at another issuer (another GitHub), the
        // same subject may be someone else. Only the operator knows it is the same provider moved.
        const elsewhere = ['issuer', 'githubUrl', 'githubApiUrl'] as const;
        const links = await store.countLinks(provider.id);
        if (elsewhere.some((key) => updated[key] !== provider[key]) && links > 0 && !values['keep-links']) {
          throw new UsageError(
            `${links} people are linked to ${provider.id} by their subject there, which another provider may give ` +
              'to someone else: make a new provider, or add --keep-links if this is the same provider at a new address',
          );
        }
        const moved = updated.issuer !== provider.issuer || updated.clientId !== provider.clientId;
        if (moved && !values['no-check']) await checkDiscovery(updated, config, secret, io);
        const data = {
          provider: provider.id,
          name: updated.name,
          secret_changed: values['client-secret-stdin'] === true,
        };
        await store.updateProvider(updated, securityEvent('provider.updated', now, { requester: CLI, data }));
        if (values.json) io.out(JSON.stringify(describe(updated, config), null, 2));
        else io.out(`updated provider ${provider.id}`);
        return 0;
      }
      case 'delete': {
        const { positionals } = parse(rest, {}, 1);
        const { id } = await find(requirePositional(positionals, 'the provider id'));
        const links = await store.countLinks(id);
        const deleted = securityEvent('provider.deleted', now, { requester: CLI, data: { provider: id, links } });
        const removed = await store.deleteProvider(id, deleted);
        if (removed === undefined) throw new NotFound(`no provider ${id}`);
        io.out(`deleted provider ${id}; its button and its sign-ins stop now, and ${removed} linked account(s) went`);
        if (removed > 0) {
          io.out(
            'People who signed in only through it cannot sign in until "users set-password" gives them a password.',
          );
        }
        return 0;
      }
      default:
        throw new UsageError(
          sub ? `unknown providers command "${sub}"` : 'providers needs a command: create, list, show, update, delete',
        );
    }
  } catch (err) {
    if (err instanceof ProviderInputError) throw new UsageError(err.message);
    throw err;
  }
}
