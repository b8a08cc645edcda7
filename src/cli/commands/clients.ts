// `tessera clients …`: register, list, show, delete clients and rotate their secrets.
import { CLI } from '../../events/index.ts';
import type { Config } from '../../config/index.ts';
import {
  type Client,
  type ClientStore,
  LOGOUT_CHANNELS,
  type LogoutChannel,
  type LogoutUri,
  SERVER_LIFETIMES,
} from '../../store/clients.ts';
import { splitScope } from '../../store/columns.ts';
import { redirectUriProblem } from '../../oauth/registration/redirect-rules.ts';
import { UsageError } from '../operations.ts';
import { createClient, deleteClient, findClient, updateClient, rotateClientSecret } from '../../admin/clients.ts';
import {
  argumentAndJson,
  deleteOne,
  flags,
  formatTime,
  type Io,
  JSON_OPTION,
  listAll,
  negations,
  parse,
  printRecord,
  repeatable,
  requireOption,
  requirePositional,
  strings,
} from './common.ts';
import { LIFETIME_OPTIONS, lifetimesFrom } from '../../admin/lifetimes.ts';
import { describeClient as describe } from '../../admin/client-view.ts';
import {
  authMethodOption,
  ClientKeysError,
  clientKeysOption,
  requestObjectAlgOption,
} from '../../admin/client-keys.ts';
import { resolveSecret } from '../../config/secret.ts';
import { sealJwtSecret } from '../../oauth/client-auth/assertion.ts';

/** The auth method and keys given, checked; and how a client_secret_jwt secret is kept (under TESSERA_SECRET). */
function keyOptions(
  values: { 'auth-method'?: string; jwks?: string; 'jwks-uri'?: string; 'request-object-signing-alg'?: string },
  config: Config,
) {
  try {
    const authMethod = authMethodOption(values['auth-method']);
    const requestObjectSigningAlg = requestObjectAlgOption(values['request-object-signing-alg']);
    const keys = clientKeysOption(values.jwks, values['jwks-uri'], config.outboundAllowPrivate);
    const sealSecret = async () => {
      const secrets = await resolveSecret(config);
      return (secret: string) => sealJwtSecret(secret, secrets);
    };
    return { authMethod, keys, sealSecret, requestObjectSigningAlg };
  } catch (err) {
    if (err instanceof ClientKeysError) throw new UsageError(err.message);
    throw err;
  }
}

/** `--roles a,b`: the roles a client may see, at least one (`--all-roles` for every role). */
function roleList(value: string): string[] {
  const roles = value
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '');
  if (roles.length === 0) throw new UsageError('--roles: a comma-separated list of roles (or --all-roles)');
  return roles;
}

/**
 * The client's logout of `channel` (Back-Channel or Front-Channel Logout 1.0) from
 * `--CHANNEL-logout-uri`, `--[no-]CHANNEL-logout-session-required` and `--no-CHANNEL-logout-uri`, over
 * what `current` has: null to remove it, undefined when none of them is said.
 */
function logoutFrom(
  values: Partial<Record<string, string | boolean | string[]>>,
  channel: LogoutChannel,
  current: Client | undefined,
): LogoutUri | null | undefined {
  if (values[`no-${channel}-logout-uri`] === true) return null;
  const said = values[`${channel}-logout-uri`] as string | undefined;
  const held = current?.[`${channel}Logout`] ?? undefined;
  const required = values[`no-${channel}-logout-session-required`]
    ? false
    : (values[`${channel}-logout-session-required`] as boolean | undefined);
  if (said === undefined && required === undefined) return undefined;
  const uri = said ?? held?.uri;
  if (uri === undefined) throw new UsageError(`--${channel}-logout-session-required needs a --${channel}-logout-uri`);
  return { uri, sessionRequired: required ?? held?.sessionRequired ?? false };
}

/** A new client's logouts, those said. */
function definedLogouts(values: Partial<Record<string, string | boolean | string[]>>) {
  const [backchannelLogout, frontchannelLogout] = LOGOUT_CHANNELS.map((c) => logoutFrom(values, c, undefined));
  return { ...(backchannelLogout && { backchannelLogout }), ...(frontchannelLogout && { frontchannelLogout }) };
}

/** What create and update both take. */
const SETTINGS = {
  ...strings('name', 'scope', 'grant-types', 'roles'),
  ...strings('auth-method', 'jwks', 'jwks-uri', 'request-object-signing-alg'),
  ...strings('backchannel-logout-uri', 'frontchannel-logout-uri'),
  ...flags('backchannel-logout-session-required', 'frontchannel-logout-session-required'),
  ...repeatable('redirect-uri', 'post-logout-redirect-uri', 'allowed-origin', 'exchange-audience'),
  ...flags('require-mfa', 'require-pushed-authorization-requests', 'require-dpop', 'admin'),
  ...LIFETIME_OPTIONS,
  ...JSON_OPTION,
};

/** What `update` takes besides: the removals. */
const REMOVALS = negations(
  'post-logout-redirect-uris',
  'allowed-origins',
  'require-mfa',
  'require-pushed-authorization-requests',
  'require-dpop',
  'admin',
  'exchange-audiences',
  'backchannel-logout-uri',
  'backchannel-logout-session-required',
  'frontchannel-logout-uri',
  'frontchannel-logout-session-required',
);

/** `--NAME` or `--no-NAME` (which wins), or undefined when neither is said. */
function yesOrNo(values: Partial<Record<string, string | boolean | string[]>>, name: string): boolean | undefined {
  return values[`no-${name}`] ? false : (values[name] as boolean | undefined);
}

/** A client as `show`, `create` and `update` print it, with the secret just issued if there is one. */
function printClient(io: Io, config: Config, client: Client, json: boolean | undefined, clientSecret?: string | null) {
  const secret = clientSecret ? { client_secret: clientSecret } : {};
  if (json) io.out(JSON.stringify({ ...describe(client, config), ...secret }, null, 2));
  else printRecord(io, false, { ...describe(client, config, true), ...secret }, 30, ' ');
}

/** What create and update say: the warnings, the client, and `stored` (the secret to store) if one was issued. */
function printSaved(
  io: Io,
  config: Config,
  json: boolean | undefined,
  saved: { client: Client; clientSecret: string | null; warnings: string[] },
  stored: string,
): number {
  for (const warning of saved.warnings) io.err(`warning: ${warning}`);
  printClient(io, config, saved.client, json, saved.clientSecret);
  if (saved.clientSecret && !json) io.out(`\nStore the ${stored} now: it is shown only once.`);
  return 0;
}

export async function clientsCommand(store: ClientStore, config: Config, args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  const now = Math.floor(Date.now() / 1000);
  switch (sub) {
    case 'create': {
      const { values } = parse(rest, { ...SETTINGS, ...strings('alg'), ...flags('public', 'first-party') });
      const grantTypes = values['grant-types']?.split(',').map((g) => g.trim());
      const { authMethod, keys, sealSecret, requestObjectSigningAlg } = keyOptions(values, config);
      const alg = values.alg;
      if (alg !== undefined && alg !== 'RS256' && alg !== 'ES256') throw new UsageError('--alg must be RS256 or ES256');
      const created = await createClient(store, config, {
        name: requireOption(values.name, '--name'),
        redirectUris: values['redirect-uri'] ?? [],
        postLogoutRedirectUris: values['post-logout-redirect-uri'] ?? [],
        scopes: splitScope(requireOption(values.scope, '--scope')),
        public: values.public ?? false,
        firstParty: values['first-party'] ?? false,
        ...(authMethod ? { authMethod } : {}),
        ...(alg ? { alg } : {}),
        ...(grantTypes ? { grantTypes } : {}),
        allowedOrigins: values['allowed-origin'] ?? [],
        lifetimes: lifetimesFrom(values, config, SERVER_LIFETIMES),
        requireMfa: values['require-mfa'] ?? false,
        requirePushedAuthorizationRequests: values['require-pushed-authorization-requests'] ?? false,
        requireDpop: values['require-dpop'] ?? false,
        keys,
        requestObjectSigningAlg,
        ...(authMethod === 'client_secret_jwt' ? { sealSecret: await sealSecret() } : {}),
        admin: values.admin ?? false,
        ...(values.roles === undefined ? {} : { allowedRoles: roleList(values.roles) }),
        ...definedLogouts(values),
        ...(values['exchange-audience'] ? { exchangeAudiences: values['exchange-audience'] } : {}),
      });
      return printSaved(io, config, values.json, created, 'client secret');
    }
    case 'list':
      return listAll(
        io,
        rest,
        () => store.listClients(),
        (c) => describe(c, config),
        'no clients',
        (c) => {
          const via = c.registeredVia === 'dynamic' ? '  (registered itself)' : '';
          const flagged = c.redirectUris.some((uri) => redirectUriProblem(uri))
            ? '  (! a redirect URI breaks the rules)'
            : '';
          const admin = c.admin ? '  (admin)' : '';
          const roles = c.allowedRoles ? `  [roles: ${c.allowedRoles.join(' ')}]` : '';
          return `${c.clientId}  ${c.tokenEndpointAuthMethod.padEnd(19)}  ${c.name}${admin}${roles}${via}${flagged}`;
        },
      );
    case 'show': {
      const { argument: id, json } = argumentAndJson(rest, 'the client id');
      printClient(io, config, await findClient(store, id), json);
      return 0;
    }
    case 'delete':
      return deleteOne(io, rest, 'the client id', 'client', (id) => deleteClient(store, id, { now }));
    case 'update': {
      const { values, positionals } = parse(rest, { ...SETTINGS, ...flags('all-roles'), ...REMOVALS }, 1);
      const id = requirePositional(positionals, 'the client id');
      const current = await findClient(store, id);
      const { authMethod, keys, sealSecret, requestObjectSigningAlg } = keyOptions(values, config);
      const origins = values['no-allowed-origins'] ? [] : values['allowed-origin'];
      const postLogout = values['no-post-logout-redirect-uris'] ? [] : values['post-logout-redirect-uri'];
      const input = {
        name: values.name,
        redirectUris: values['redirect-uri'],
        postLogoutRedirectUris: postLogout,
        scopes: values.scope === undefined ? undefined : splitScope(values.scope),
        grantTypes: values['grant-types']?.split(',').map((g) => g.trim()),
        allowedOrigins: origins,
        lifetimes: lifetimesFrom(values, config, current.lifetimes),
        requireMfa: yesOrNo(values, 'require-mfa'),
        requirePushedAuthorizationRequests: yesOrNo(values, 'require-pushed-authorization-requests'),
        requireDpop: yesOrNo(values, 'require-dpop'),
        authMethod,
        keys,
        requestObjectSigningAlg,
        ...(authMethod === 'client_secret_jwt' ? { sealSecret: await sealSecret() } : {}),
        admin: yesOrNo(values, 'admin'),
        allowedRoles: values['all-roles'] ? null : values.roles === undefined ? undefined : roleList(values.roles),
        backchannelLogout: logoutFrom(values, 'backchannel', current),
        frontchannelLogout: logoutFrom(values, 'frontchannel', current),
        exchangeAudiences: values['no-exchange-audiences'] ? [] : values['exchange-audience'],
      };
      const updated = await updateClient(store, id, input, now, CLI, config);
      return printSaved(io, config, values.json, updated, 'new client secret');
    }
    case 'rotate-secret': {
      const { values, positionals } = parse(rest, { ...strings('grace'), ...JSON_OPTION }, 1);
      const id = requirePositional(positionals, 'the client id');
      const current = await findClient(store, id);
      const grace = values.grace === undefined ? 0 : Number(values.grace);
      if (!Number.isInteger(grace) || grace < 0) throw new UsageError('--grace must be a whole number of seconds');
      const jwt = current.tokenEndpointAuthMethod === 'client_secret_jwt';
      const seal = jwt ? await keyOptions({}, config).sealSecret() : undefined;
      const { secret, previousUntil } = await rotateClientSecret(store, id, now, CLI, grace, seal);
      const until = previousUntil === null ? null : formatTime(previousUntil);
      if (values.json) {
        io.out(JSON.stringify({ client_id: id, client_secret: secret, previous_secret_expires_at: until }, null, 2));
      } else {
        const old = until ? `The old secret keeps working until ${until}.` : 'The old secret no longer works.';
        io.out(`client_secret ${secret}\n\n${old} Store the new one now: it is shown only once.`);
      }
      return 0;
    }
    default:
      throw new UsageError(
        sub
          ? `unknown clients command "${sub}"`
          : 'clients needs a command: create, list, show, update, delete, rotate-secret',
      );
  }
}
