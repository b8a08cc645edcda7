// `tessera providers …`: the upstream providers people may sign in with (src/upstream), OpenID
// Connect providers and GitHub. `create` and `show` print the redirect (callback) URI to register at
// the provider; the client secret is read from standard input only and stored encrypted.
import type { Config } from '../../config/index.ts';
import { resolveSecret } from '../../config/secret.ts';
import type { UpstreamProvider, UpstreamStore } from '../../store/upstream.ts';
import { callbackUri } from '../../upstream/index.ts';
import { ProviderInputError, type ProviderSettings } from '../../upstream/providers.ts';
import {
  createProvider,
  deleteProvider,
  describeLinkedProvider,
  describeProvider,
  findProvider,
  updateProvider,
} from '../../admin/providers.ts';
import { splitScope } from '../../store/columns.ts';
import { UsageError } from '../operations.ts';
import {
  flags,
  type Io,
  JSON_OPTION,
  listAll,
  negations,
  onlyArgument,
  parse,
  readPassword,
  repeatable,
  requireOption,
  requirePositional,
  showOne,
  strings,
} from './common.ts';

const TYPES = { oidc: 'OpenID Connect', github: 'GitHub' } as const;

/** The yes/no settings. */
const YES_NO = ['trust-email', 'link-only', 'trust-upstream-mfa', 'allow-private-network', 'accept-id-jag'] as const;

/** The settings both create and update take. */
const SETTINGS = {
  ...strings('name', 'issuer', 'client-id', 'scope', 'github-url', 'github-api-url'),
  ...flags('client-secret-stdin', ...YES_NO, 'no-check'),
  ...repeatable('login-hint-domain'),
  ...JSON_OPTION,
};

/** For update: each yes/no setting's --no- form, and the removal of the login hint domains. */
const NEGATIONS = negations(...YES_NO, 'login-hint-domains');

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
  const scope = text('scope');
  return {
    name: text('name'),
    issuer: text('issuer'),
    clientId: text('client-id'),
    clientSecret: values['client-secret-stdin'] ? await readPassword(io) : undefined,
    scopes: scope === undefined ? undefined : splitScope(scope),
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

export async function providersCommand(store: UpstreamStore, config: Config, args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  const now = Math.floor(Date.now() / 1000);
  const secret = await resolveSecret(config);
  const deps = { config, secret };
  const describe = (provider: UpstreamProvider) => describeProvider(provider, config);
  const discovered = (provider: UpstreamProvider, endpoint: string) =>
    `discovered ${provider.issuer}: authorization at ${endpoint}`;
  try {
    switch (sub) {
      case 'create': {
        const { values } = parse(rest, { ...SETTINGS, ...strings('type', 'id') });
        const type = requireOption(values.type, '--type');
        if (type !== 'oidc' && type !== 'github') throw new UsageError('--type: oidc or github');
        requireOption(values['client-id'], '--client-id');
        if (!values['client-secret-stdin']) {
          throw new UsageError('the client secret is read from standard input: add --client-secret-stdin');
        }
        const settings = { ...(await settingsOf(values, io)), type, id: values.id } as const;
        const { provider, authorizationEndpoint } = await createProvider(store, deps, settings, {
          now,
          check: !values['no-check'],
        });
        if (authorizationEndpoint) io.out(discovered(provider, authorizationEndpoint));
        if (values.json) io.out(JSON.stringify(describe(provider), null, 2));
        else {
          const where = provider.type === 'oidc' ? `, ${provider.issuer}` : '';
          io.out(`created provider ${provider.id} (${TYPES[type]}${where}), its button says "${provider.name}"`);
          io.out(`Register this redirect URI at the provider: ${callbackUri(config.issuer, provider.id)}`);
        }
        return 0;
      }
      case 'list':
        return listAll(
          io,
          rest,
          () => store.listProviders(),
          describe,
          'no providers',
          (p) => {
            return `${p.id.padEnd(20)}  ${p.type.padEnd(6)}  ${p.name}`;
          },
        );
      case 'show': {
        const shown = async (id: string) => describeLinkedProvider(store, config, await findProvider(store, id));
        return showOne(io, rest, 'the provider id', shown, 22, ' ');
      }
      case 'update': {
        const { values, positionals } = parse(rest, { ...SETTINGS, ...NEGATIONS, ...flags('keep-links') }, 1);
        const id = requirePositional(positionals, 'the provider id');
        const { provider: updated, authorizationEndpoint } = await updateProvider(
          store,
          deps,
          id,
          await settingsOf(values, io),
          { now, check: !values['no-check'], keepLinks: values['keep-links'] },
        );
        if (authorizationEndpoint) io.out(discovered(updated, authorizationEndpoint));
        if (values.json) io.out(JSON.stringify(describe(updated), null, 2));
        else io.out(`updated provider ${id}`);
        return 0;
      }
      case 'delete': {
        const id = onlyArgument(rest, 'the provider id');
        const removed = await deleteProvider(store, id, { now });
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
