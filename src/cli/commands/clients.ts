// `tessera clients …`: register, list, show, delete clients and rotate their secrets.
import { allowedOrigins } from '../../oauth/origins.ts';
import { CLI } from '../../events/index.ts';
import type { Config } from '../../config/index.ts';
import { type BackchannelLogout, type Client, type ClientStore, SERVER_LIFETIMES } from '../../store/clients.ts';
import { splitScope } from '../../store/columns.ts';
import { redirectUriProblem } from '../../oauth/registration/redirect-rules.ts';
import { createClient, deleteClient, updateClient, rotateClientSecret, UsageError } from '../operations.ts';
import { formatTime, type Io, NotFound, parse, printList, requireOption, requirePositional } from './common.ts';
import { describeLifetimes, LIFETIME_OPTIONS, lifetimesFrom } from './lifetimes.ts';
import { authMethodOption, ClientKeysError, clientKeysOption, requestObjectAlgOption } from '../client-keys.ts';
import { resolveSecret } from '../../config/secret.ts';
import { sealJwtSecret } from '../../oauth/client-auth/assertion.ts';

/** The options of a client's keys, on create and update. */
const KEY_OPTIONS = {
  'auth-method': { type: 'string' },
  jwks: { type: 'string' },
  'jwks-uri': { type: 'string' },
  'request-object-signing-alg': { type: 'string' },
} as const;

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

function describe(client: Client, config: Config, text = false): Record<string, unknown> {
  return {
    client_id: client.clientId,
    client_name: client.name,
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    scope: client.scopes.join(' '),
    grant_types: client.grantTypes,
    allowed_origins: client.allowedOrigins,
    cors_origins: allowedOrigins(client),
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    jwks_uri: client.jwksUri ?? null,
    jwks_kids: client.jwks ? client.jwks.keys.map((key) => String(key.kid ?? '(no kid)')) : [],
    first_party: client.firstParty,
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    require_mfa: client.requireMfa === true,
    require_pushed_authorization_requests: client.requirePushedAuthorizationRequests === true,
    request_object_signing_alg: client.requestObjectSigningAlg ?? null,
    admin: client.admin === true,
    // The roles it may see in tokens; null: every role.
    roles: client.allowedRoles ?? (text ? '(every role)' : null),
    backchannel_logout_uri: client.backchannelLogout?.uri ?? null,
    backchannel_logout_session_required: client.backchannelLogout?.sessionRequired ?? false,
    ...describeLifetimes(client.lifetimes, config, text),
    created_at: formatTime(client.createdAt),
    // Registered before today's rules: it keeps working, and is flagged here.
    redirect_uri_problems: [...client.redirectUris, ...client.postLogoutRedirectUris].flatMap((uri) => {
      const problem = redirectUriProblem(uri);
      return problem ? [`${uri} ${problem}`] : [];
    }),
    // Who vouches for it: the operator, or the client itself (RFC 7591), and the user it belongs to.
    registered_via: client.registeredVia,
    owner_id: client.ownerId,
  };
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

const BACKCHANNEL_OPTIONS = {
  'backchannel-logout-uri': { type: 'string' },
  'backchannel-logout-session-required': { type: 'boolean' },
} as const;

/**
 * The client's back-channel logout from `--backchannel-logout-uri` and
 * `--[no-]backchannel-logout-session-required`, over what `current` has; nothing when neither is said.
 */
function backchannelLogoutFrom(
  values: {
    'backchannel-logout-uri'?: string | undefined;
    'backchannel-logout-session-required'?: boolean | undefined;
    'no-backchannel-logout-session-required'?: boolean | undefined;
  },
  current: Client | undefined,
): { backchannelLogout?: BackchannelLogout } {
  const uri = values['backchannel-logout-uri'] ?? current?.backchannelLogout?.uri;
  const required = values['no-backchannel-logout-session-required']
    ? false
    : values['backchannel-logout-session-required'];
  if (values['backchannel-logout-uri'] === undefined && required === undefined) return {};
  if (uri === undefined) throw new UsageError('--backchannel-logout-session-required needs a --backchannel-logout-uri');
  const sessionRequired = required ?? current?.backchannelLogout?.sessionRequired ?? false;
  return { backchannelLogout: { uri, sessionRequired } };
}

function printClient(io: Io, described: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(described)) {
    io.out(`${key.padEnd(30)} ${Array.isArray(value) ? value.join(' ') : String(value)}`);
  }
}

export async function clientsCommand(store: ClientStore, config: Config, args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'create': {
      const { values } = parse(rest, {
        name: { type: 'string' },
        'redirect-uri': { type: 'string', multiple: true },
        'post-logout-redirect-uri': { type: 'string', multiple: true },
        scope: { type: 'string' },
        public: { type: 'boolean' },
        'first-party': { type: 'boolean' },
        'require-mfa': { type: 'boolean' },
        'require-pushed-authorization-requests': { type: 'boolean' },
        ...KEY_OPTIONS,
        ...BACKCHANNEL_OPTIONS,
        'auth-method': { type: 'string' },
        alg: { type: 'string' },
        'grant-types': { type: 'string' },
        'allowed-origin': { type: 'string', multiple: true },
        admin: { type: 'boolean' },
        roles: { type: 'string' },
        ...LIFETIME_OPTIONS,
        json: { type: 'boolean' },
      });
      const grantTypes = values['grant-types']?.split(',').map((g) => g.trim());
      const { authMethod, keys, sealSecret, requestObjectSigningAlg } = keyOptions(values, config);
      const alg = values.alg;
      if (alg !== undefined && alg !== 'RS256' && alg !== 'ES256') throw new UsageError('--alg must be RS256 or ES256');
      const { client, clientSecret, warnings } = await createClient(store, config, {
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
        keys,
        requestObjectSigningAlg,
        ...(authMethod === 'client_secret_jwt' ? { sealSecret: await sealSecret() } : {}),
        admin: values.admin ?? false,
        ...(values.roles === undefined ? {} : { allowedRoles: roleList(values.roles) }),
        ...backchannelLogoutFrom(values, undefined),
      });
      for (const warning of warnings) io.err(`warning: ${warning}`);
      const secret = clientSecret ? { client_secret: clientSecret } : {};
      if (values.json) io.out(JSON.stringify({ ...describe(client, config), ...secret }, null, 2));
      else printClient(io, { ...describe(client, config, true), ...secret });
      if (clientSecret && !values.json) io.out('\nStore the client secret now: it is shown only once.');
      return 0;
    }
    case 'list': {
      const { values } = parse(rest, { json: { type: 'boolean' } });
      const describeClient = (c: Client) => describe(c, config);
      printList(io, values.json, await store.listClients(), describeClient, 'no clients', (c) => {
        const via = c.registeredVia === 'dynamic' ? '  (registered itself)' : '';
        const flagged = c.redirectUris.some((uri) => redirectUriProblem(uri))
          ? '  (! a redirect URI breaks the rules)'
          : '';
        const admin = c.admin ? '  (admin)' : '';
        const roles = c.allowedRoles ? `  [roles: ${c.allowedRoles.join(' ')}]` : '';
        return `${c.clientId}  ${c.tokenEndpointAuthMethod.padEnd(19)}  ${c.name}${admin}${roles}${via}${flagged}`;
      });
      return 0;
    }
    case 'show': {
      const { values, positionals } = parse(rest, { json: { type: 'boolean' } }, 1);
      const id = requirePositional(positionals, 'the client id');
      const client = await store.getClient(id, { suspended: true });
      if (!client) throw new NotFound(`no client ${id}`);
      if (values.json) io.out(JSON.stringify(describe(client, config), null, 2));
      else printClient(io, describe(client, config, true));
      return 0;
    }
    case 'delete': {
      const { positionals } = parse(rest, {}, 1);
      const id = requirePositional(positionals, 'the client id');
      await deleteClient(store, id, { now: Math.floor(Date.now() / 1000) });
      io.out(`deleted client ${id}`);
      return 0;
    }
    case 'update': {
      const { values, positionals } = parse(
        rest,
        {
          name: { type: 'string' },
          'redirect-uri': { type: 'string', multiple: true },
          'post-logout-redirect-uri': { type: 'string', multiple: true },
          'no-post-logout-redirect-uris': { type: 'boolean' },
          scope: { type: 'string' },
          'grant-types': { type: 'string' },
          'allowed-origin': { type: 'string', multiple: true },
          'no-allowed-origins': { type: 'boolean' },
          'require-mfa': { type: 'boolean' },
          'no-require-mfa': { type: 'boolean' },
          'require-pushed-authorization-requests': { type: 'boolean' },
          'no-require-pushed-authorization-requests': { type: 'boolean' },
          ...KEY_OPTIONS,
          admin: { type: 'boolean' },
          'no-admin': { type: 'boolean' },
          roles: { type: 'string' },
          'all-roles': { type: 'boolean' },
          ...BACKCHANNEL_OPTIONS,
          'no-backchannel-logout-uri': { type: 'boolean' },
          'no-backchannel-logout-session-required': { type: 'boolean' },
          ...LIFETIME_OPTIONS,
          json: { type: 'boolean' },
        },
        1,
      );
      const id = requirePositional(positionals, 'the client id');
      const current = await store.getClient(id, { suspended: true });
      if (!current) throw new NotFound(`no client ${id}`);
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
        requireMfa: values['no-require-mfa'] ? false : values['require-mfa'],
        requirePushedAuthorizationRequests: values['no-require-pushed-authorization-requests']
          ? false
          : values['require-pushed-authorization-requests'],
        authMethod,
        keys,
        requestObjectSigningAlg,
        ...(authMethod === 'client_secret_jwt' ? { sealSecret: await sealSecret() } : {}),
        admin: values['no-admin'] ? false : values.admin,
        allowedRoles: values['all-roles'] ? null : values.roles === undefined ? undefined : roleList(values.roles),
        backchannelLogout: values['no-backchannel-logout-uri']
          ? null
          : backchannelLogoutFrom(values, current).backchannelLogout,
      };
      const now = Math.floor(Date.now() / 1000);
      const { client, warnings, clientSecret } = await updateClient(store, id, input, now, CLI, config);
      for (const warning of warnings) io.err(`warning: ${warning}`);
      const secret = clientSecret ? { client_secret: clientSecret } : {};
      if (values.json) io.out(JSON.stringify({ ...describe(client, config), ...secret }, null, 2));
      else printClient(io, { ...describe(client, config, true), ...secret });
      if (clientSecret && !values.json) io.out('\nStore the new client secret now: it is shown only once.');
      return 0;
    }
    case 'rotate-secret': {
      const { values, positionals } = parse(rest, { grace: { type: 'string' }, json: { type: 'boolean' } }, 1);
      const id = requirePositional(positionals, 'the client id');
      if (!(await store.getClient(id, { suspended: true }))) throw new NotFound(`no client ${id}`);
      const grace = values.grace === undefined ? 0 : Number(values.grace);
      if (!Number.isInteger(grace) || grace < 0) throw new UsageError('--grace must be a whole number of seconds');
      const now = Math.floor(Date.now() / 1000);
      const current = await store.getClient(id, { suspended: true });
      const jwt = current?.tokenEndpointAuthMethod === 'client_secret_jwt';
      const seal = jwt ? await keyOptions({}, config).sealSecret() : undefined;
      const secret = await rotateClientSecret(store, id, now, CLI, grace, seal);
      const until = grace > 0 ? formatTime(now + grace) : null;
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
