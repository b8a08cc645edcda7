// `tessera clients …`: register, list, show, delete clients and rotate their secrets.
import { allowedOrigins } from '../../oauth/origins.ts';
import { CLI, securityEvent } from '../../events/index.ts';
import type { Config } from '../../config/index.ts';
import { type BackchannelLogout, type Client, type ClientStore, SERVER_LIFETIMES } from '../../store/clients.ts';
import { splitScope } from '../../store/columns.ts';
import { redirectUriProblem } from '../../oauth/registration/redirect-rules.ts';
import { createClient, updateClient, rotateClientSecret, UsageError } from '../operations.ts';
import { formatTime, type Io, NotFound, parse, printList, requireOption, requirePositional } from './common.ts';
import { describeLifetimes, LIFETIME_OPTIONS, lifetimesFrom } from './lifetimes.ts';

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
    first_party: client.firstParty,
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    require_mfa: client.requireMfa === true,
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
        ...BACKCHANNEL_OPTIONS,
        'auth-method': { type: 'string' },
        alg: { type: 'string' },
        'grant-types': { type: 'string' },
        'allowed-origin': { type: 'string', multiple: true },
        ...LIFETIME_OPTIONS,
        json: { type: 'boolean' },
      });
      const grantTypes = values['grant-types']?.split(',').map((g) => g.trim());
      const authMethod = values['auth-method'];
      if (authMethod !== undefined && authMethod !== 'client_secret_basic' && authMethod !== 'client_secret_post') {
        throw new UsageError('--auth-method must be client_secret_basic or client_secret_post');
      }
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
        return `${c.clientId}  ${c.tokenEndpointAuthMethod.padEnd(19)}  ${c.name}${via}${flagged}`;
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
      if (!(await store.getClient(id, { suspended: true }))) throw new NotFound(`no client ${id}`);
      const deleted = securityEvent('client.deleted', Math.floor(Date.now() / 1000), { clientId: id, requester: CLI });
      if (!(await store.deleteClient(id, deleted))) throw new NotFound(`no client ${id}`);
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
        backchannelLogout: values['no-backchannel-logout-uri']
          ? null
          : backchannelLogoutFrom(values, current).backchannelLogout,
      };
      const now = Math.floor(Date.now() / 1000);
      const { client, warnings } = await updateClient(store, id, input, now, CLI, config);
      for (const warning of warnings) io.err(`warning: ${warning}`);
      if (values.json) io.out(JSON.stringify(describe(client, config), null, 2));
      else printClient(io, describe(client, config, true));
      return 0;
    }
    case 'rotate-secret': {
      const { values, positionals } = parse(rest, { grace: { type: 'string' }, json: { type: 'boolean' } }, 1);
      const id = requirePositional(positionals, 'the client id');
      if (!(await store.getClient(id, { suspended: true }))) throw new NotFound(`no client ${id}`);
      const grace = values.grace === undefined ? 0 : Number(values.grace);
      if (!Number.isInteger(grace) || grace < 0) throw new UsageError('--grace must be a whole number of seconds');
      const now = Math.floor(Date.now() / 1000);
      const secret = await rotateClientSecret(store, id, now, CLI, grace);
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
