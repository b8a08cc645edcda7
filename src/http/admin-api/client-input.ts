// A client's settings as the admin API takes them (snake_case, as RFC 7591 names them where it has a
// name), turned into the operations' input (src/admin/clients.ts): the same checks as the CLI's options.
import { authMethodOption, clientKeysOption, requestObjectAlgOption } from '../../admin/client-keys.ts';
import { usage } from '../../admin/client-rules.ts';
import type { CreateClientInput, UpdateClientInput } from '../../admin/client-input.ts';
import { lifetimesFrom } from '../../admin/lifetimes.ts';
import type { Config } from '../../config/index.ts';
import { sealJwtSecret } from '../../oauth/client-auth/assertion.ts';
import { type Client, type LogoutChannel, type LogoutUri, SERVER_LIFETIMES } from '../../store/clients.ts';
import type { Secrets } from '../../tokens/secrets.ts';

const uris = { type: 'array', items: { type: 'string', maxLength: 2048 }, maxItems: 50 } as const;
const ttl = { type: ['integer', 'null'], minimum: 1, description: 'seconds; null follows the server' } as const;

/** What a client's settings may be, on POST (with `name`, `scope` required) and PATCH. */
const SETTINGS = {
  name: { type: 'string', maxLength: 256 },
  redirect_uris: uris,
  post_logout_redirect_uris: uris,
  scope: { type: 'string', maxLength: 2048, description: 'space-separated' },
  grant_types: { type: 'array', items: { type: 'string' }, maxItems: 10 },
  allowed_origins: uris,
  token_endpoint_auth_method: {
    type: 'string',
    enum: ['client_secret_basic', 'client_secret_post', 'client_secret_jwt', 'private_key_jwt'],
  },
  jwks: { type: 'object', description: 'a JWK Set of public keys' },
  jwks_uri: { type: 'string', maxLength: 2048 },
  require_mfa: { type: 'boolean' },
  require_pushed_authorization_requests: { type: 'boolean' },
  dpop_bound_access_tokens: { type: 'boolean', description: 'its token requests must carry a DPoP proof' },
  request_object_signing_alg: { type: ['string', 'null'], description: 'null: any asymmetric alg' },
  admin: { type: 'boolean', description: 'may hold the admin scope' },
  roles: { type: ['array', 'null'], items: { type: 'string' }, description: 'the roles it may see; null: every role' },
  backchannel_logout_uri: { type: ['string', 'null'], maxLength: 2048 },
  backchannel_logout_session_required: { type: 'boolean' },
  frontchannel_logout_uri: { type: ['string', 'null'], maxLength: 2048 },
  frontchannel_logout_session_required: { type: 'boolean' },
  exchange_audiences: { ...uris, description: 'the audiences it may exchange tokens for (RFC 8693)' },
  access_token_ttl: ttl,
  refresh_token_ttl: ttl,
  id_token_ttl: ttl,
} as const;

export const NEW_CLIENT = {
  type: 'object',
  required: ['name', 'scope'],
  additionalProperties: false,
  properties: {
    ...SETTINGS,
    public: { type: 'boolean', default: false, description: 'a public client (PKCE, no secret)' },
    first_party: { type: 'boolean' },
    id_token_signed_response_alg: { type: 'string', enum: ['RS256', 'ES256'] },
  },
} as const;

export const CLIENT_PATCH = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: SETTINGS,
} as const;

export interface ClientSettings {
  name?: string;
  redirect_uris?: string[];
  post_logout_redirect_uris?: string[];
  scope?: string;
  grant_types?: string[];
  allowed_origins?: string[];
  token_endpoint_auth_method?: string;
  jwks?: object;
  jwks_uri?: string;
  require_mfa?: boolean;
  require_pushed_authorization_requests?: boolean;
  dpop_bound_access_tokens?: boolean;
  request_object_signing_alg?: string | null;
  admin?: boolean;
  roles?: string[] | null;
  backchannel_logout_uri?: string | null;
  backchannel_logout_session_required?: boolean;
  frontchannel_logout_uri?: string | null;
  frontchannel_logout_session_required?: boolean;
  exchange_audiences?: string[];
  access_token_ttl?: number | null;
  refresh_token_ttl?: number | null;
  id_token_ttl?: number | null;
}

export interface NewClient extends ClientSettings {
  name: string;
  scope: string;
  public: boolean;
  first_party?: boolean;
  id_token_signed_response_alg?: 'RS256' | 'ES256';
}

const text = (ttl: number | null | undefined) =>
  ttl === undefined ? undefined : ttl === null ? 'default' : String(ttl);

/** The settings both POST and PATCH take, over what the client has (`current`, none on POST). */
function common(body: ClientSettings, config: Config, secret: Secrets, current: Client | undefined) {
  const keys = usage(() =>
    clientKeysOption(
      body.jwks === undefined ? undefined : JSON.stringify(body.jwks),
      body.jwks_uri,
      config.outboundAllowPrivate,
    ),
  );
  const given = { 'access-token-ttl': text(body.access_token_ttl), 'refresh-token-ttl': text(body.refresh_token_ttl) };
  const ttls = { ...given, 'id-token-ttl': text(body.id_token_ttl) };
  const defined = Object.values(ttls).some((v) => v !== undefined);
  const alg = body.request_object_signing_alg;
  return {
    name: body.name,
    redirectUris: body.redirect_uris,
    postLogoutRedirectUris: body.post_logout_redirect_uris,
    scopes: body.scope === undefined ? undefined : body.scope.split(' ').filter((s) => s !== ''),
    grantTypes: body.grant_types,
    allowedOrigins: body.allowed_origins,
    authMethod: usage(() => authMethodOption(body.token_endpoint_auth_method)),
    keys,
    sealSecret: (clientSecret: string) => sealJwtSecret(clientSecret, secret),
    requireMfa: body.require_mfa,
    requirePushedAuthorizationRequests: body.require_pushed_authorization_requests,
    requireDpop: body.dpop_bound_access_tokens,
    requestObjectSigningAlg: alg === null ? null : usage(() => requestObjectAlgOption(alg)),
    admin: body.admin,
    lifetimes: defined ? lifetimesFrom(ttls, config, current?.lifetimes ?? SERVER_LIFETIMES) : undefined,
    backchannelLogout: logoutOf(body, 'backchannel', current),
    frontchannelLogout: logoutOf(body, 'frontchannel', current),
    exchangeAudiences: body.exchange_audiences,
  };
}

/** A `…_logout_uri` and its `…_session_required` over the client's: null removes it, undefined keeps it. */
function logoutOf(
  body: ClientSettings,
  channel: LogoutChannel,
  current: Client | undefined,
): LogoutUri | null | undefined {
  const given = body[`${channel}_logout_uri`];
  const required = body[`${channel}_logout_session_required`];
  const had = current?.[`${channel}Logout`];
  if (given === null) return null;
  const uri = given ?? had?.uri;
  if ((given === undefined && required === undefined) || !uri) return undefined;
  return { uri, sessionRequired: required ?? had?.sessionRequired ?? false };
}

export function createInput(body: NewClient, config: Config, secret: Secrets): CreateClientInput {
  const settings = common(body, config, secret, undefined);
  // What is not given is left out (null, on creation, is the default too).
  const given = Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined && v !== null));
  return {
    ...given,
    name: body.name,
    scopes: settings.scopes ?? [],
    redirectUris: body.redirect_uris ?? [],
    public: body.public,
    ...(body.first_party ? { firstParty: true } : {}),
    ...(body.id_token_signed_response_alg ? { alg: body.id_token_signed_response_alg } : {}),
    ...(body.roles ? { allowedRoles: body.roles } : {}),
  } as CreateClientInput;
}

export function updateInput(body: ClientSettings, config: Config, secret: Secrets, current: Client): UpdateClientInput {
  return { ...common(body, config, secret, current), allowedRoles: body.roles };
}
