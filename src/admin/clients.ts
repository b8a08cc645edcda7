// The operator's operations on clients (`tessera clients create|update|rotate-secret`, the admin API
// src/http/admin-api/clients.ts): plain functions over the store, one layer for both. A bad value is
// an AdminError (./client-rules.ts), an unknown client a NotFoundError; each change records its event.
import { CLI, type Requester, securityEvent } from '../events/index.ts';
import type { Config } from '../config/index.ts';
import {
  LOGOUT_CHANNELS,
  type Client,
  type ClientStore,
  SERVER_LIFETIMES,
  type TokenEndpointAuthMethod,
} from '../store/clients.ts';
import { normalizeRedirectUri } from '../oauth/registration/redirect-rules.ts';
import { hashToken, newId, randomToken } from '../tokens/opaque.ts';
import { checkKeysFor } from './client-keys.ts';
import {
  checkExchangeAudiences,
  checkLogout,
  checkGrantTypes,
  checkOrigin,
  checkRedirectUri,
  checkScopes,
  sealed,
  usage,
} from './client-rules.ts';
import type { CreateClientInput, UpdateClientInput } from './client-input.ts';
import { AdminError, found, NotFoundError } from './errors.ts';

import { checkRoles } from './roles.ts';

/** The client of that client_id, a suspended one too (the operator may look at it and change it). */
export async function findClient(store: Pick<ClientStore, 'getClient'>, clientId: string): Promise<Client> {
  return found(await store.getClient(clientId, { suspended: true }), `no client ${clientId}`);
}

export async function createClient(
  store: ClientStore,
  config: Pick<Config, 'scopes'> & Partial<Pick<Config, 'allowHttpRedirectUris'>>,
  input: CreateClientInput,
  now = Math.floor(Date.now() / 1000),
  requester: Requester = CLI,
): Promise<{ client: Client; clientSecret: string | null; warnings: string[] }> {
  if (input.name.trim() === '') throw new AdminError('--name must not be empty');
  const grantTypes = checkGrantTypes(input.grantTypes ?? ['authorization_code', 'refresh_token'], input.public);
  const allowedOrigins = [...new Set((input.allowedOrigins ?? []).map(checkOrigin))];
  // A client with only client_credentials redirects nowhere.
  if (input.redirectUris.length === 0 && grantTypes.includes('authorization_code')) {
    throw new AdminError('at least one --redirect-uri is required');
  }
  const allowHttp = config.allowHttpRedirectUris ?? false;
  const warnings = [
    ...input.redirectUris.map((uri) => checkRedirectUri(uri, '--redirect-uri', allowHttp)),
    ...(input.postLogoutRedirectUris ?? []).map((uri) =>
      checkRedirectUri(uri, '--post-logout-redirect-uri', allowHttp),
    ),
  ].filter((warning) => warning !== undefined);
  checkScopes(input.scopes, config);
  if (input.public && input.authMethod) throw new AdminError('--auth-method does not apply to a --public client');
  const method: TokenEndpointAuthMethod = input.public ? 'none' : (input.authMethod ?? 'client_secret_basic');
  const keys = input.keys ?? {};
  usage(() => checkKeysFor(method, keys));

  // A client that signs with its key has no secret.
  const clientSecret = input.public || method === 'private_key_jwt' ? null : randomToken();
  const client: Client = {
    clientId: newId(),
    secretHash: clientSecret === null ? null : hashToken(clientSecret),
    name: input.name.trim(),
    redirectUris: [...new Set(input.redirectUris.map(normalizeRedirectUri))],
    postLogoutRedirectUris: [...new Set((input.postLogoutRedirectUris ?? []).map(normalizeRedirectUri))],
    scopes: [...new Set(input.scopes)],
    grantTypes,
    allowedOrigins,
    tokenEndpointAuthMethod: method,
    firstParty: input.firstParty ?? false,
    idTokenSignedResponseAlg: input.alg ?? null,
    createdAt: now,
    registeredVia: 'operator',
    ownerId: null,
    registrationTokenHash: null,
    metadata: {},
    previousSecret: null,
    lifetimes: input.lifetimes ?? SERVER_LIFETIMES,
    ...(input.requireMfa ? { requireMfa: true } : {}),
    ...(keys.jwks ? { jwks: keys.jwks } : {}),
    ...(keys.jwksUri ? { jwksUri: keys.jwksUri } : {}),
    ...(method === 'client_secret_jwt' ? { secretEncrypted: sealed(input.sealSecret, clientSecret!) } : {}),
    ...(input.requirePushedAuthorizationRequests ? { requirePushedAuthorizationRequests: true } : {}),
    ...(input.requireDpop ? { requireDpop: true } : {}),
    ...(input.requestObjectSigningAlg ? { requestObjectSigningAlg: input.requestObjectSigningAlg } : {}),
    ...(input.admin ? { admin: true } : {}),
    ...(input.allowedRoles ? { allowedRoles: checkRoles(input.allowedRoles, '--roles') } : {}),
    ...(input.backchannelLogout
      ? { backchannelLogout: checkLogout(input.backchannelLogout, allowHttp, 'backchannel') }
      : {}),
    ...(input.frontchannelLogout
      ? { frontchannelLogout: checkLogout(input.frontchannelLogout, allowHttp, 'frontchannel') }
      : {}),
    ...(input.exchangeAudiences?.length ? { exchangeAudiences: checkExchangeAudiences(input.exchangeAudiences) } : {}),
  };
  const data = {
    name: client.name,
    public: clientSecret === null,
    scopes: client.scopes,
    ...(input.requireMfa ? { require_mfa: true } : {}),
    ...(input.requirePushedAuthorizationRequests ? { require_pushed_authorization_requests: true } : {}),
    ...(input.requireDpop ? { dpop_bound_access_tokens: true } : {}),
    ...(client.admin ? { admin: true } : {}),
    ...(client.allowedRoles ? { roles: client.allowedRoles } : {}),
    ...(client.exchangeAudiences ? { exchange_audiences: client.exchangeAudiences } : {}),
  };
  await store.createClient(
    client,
    securityEvent('client.created', now, { clientId: client.clientId, requester, data }),
  );
  return { client, clientSecret, warnings };
}

/** Changes what `tessera clients update` changes; the client_id, secret and owner stay. */
export async function updateClient(
  store: ClientStore,
  clientId: string,
  input: UpdateClientInput,
  now = Math.floor(Date.now() / 1000),
  requester: Requester = CLI,
  config?: Pick<Config, 'scopes'> & Partial<Pick<Config, 'allowHttpRedirectUris'>>,
): Promise<{ client: Client; warnings: string[]; clientSecret: string | null }> {
  const client = await findClient(store, clientId);
  const isPublic = client.tokenEndpointAuthMethod === 'none';
  if (isPublic && input.authMethod) throw new AdminError('--auth-method does not apply to a public client');
  const method = input.authMethod ?? client.tokenEndpointAuthMethod;
  const keys = input.keys ?? { jwks: client.jwks ?? null, jwksUri: client.jwksUri ?? null };
  usage(() => checkKeysFor(method, keys));
  // A secret is issued to a client that comes to need one and has none, and for client_secret_jwt,
  // whose secret the server must hold (a hash cannot check an HMAC).
  const needsSecret = method !== 'none' && method !== 'private_key_jwt';
  const newSecret =
    (needsSecret && client.secretHash === null) ||
    (method === 'client_secret_jwt' && client.tokenEndpointAuthMethod !== 'client_secret_jwt')
      ? randomToken()
      : null;
  const grantTypes = input.grantTypes ? checkGrantTypes(input.grantTypes, isPublic) : client.grantTypes;
  const allowHttp = config?.allowHttpRedirectUris ?? false;
  const warnings: Array<string | undefined> = [];
  const redirectUris = input.redirectUris
    ? [...new Set(input.redirectUris.map(normalizeRedirectUri))]
    : client.redirectUris;
  if (input.redirectUris)
    warnings.push(...redirectUris.map((uri) => checkRedirectUri(uri, '--redirect-uri', allowHttp)));
  const postLogout = input.postLogoutRedirectUris
    ? [...new Set(input.postLogoutRedirectUris.map(normalizeRedirectUri))]
    : client.postLogoutRedirectUris;
  if (input.postLogoutRedirectUris) {
    warnings.push(...postLogout.map((uri) => checkRedirectUri(uri, '--post-logout-redirect-uri', allowHttp)));
  }
  if (grantTypes.includes('authorization_code') && redirectUris.length === 0) {
    throw new AdminError('authorization_code needs a redirect URI, and this client would have none');
  }
  const scopes = input.scopes ? [...new Set(input.scopes)] : client.scopes;
  if (config) checkScopes(scopes, config);
  else if (scopes.length === 0) throw new AdminError('--scope must name at least one scope');
  const name = input.name === undefined ? client.name : input.name.trim();
  if (name === '') throw new AdminError('--name must not be empty');
  const allowedOrigins = input.allowedOrigins
    ? [...new Set(input.allowedOrigins.map(checkOrigin))]
    : client.allowedOrigins;
  const updated = {
    ...client,
    name,
    redirectUris,
    postLogoutRedirectUris: postLogout,
    scopes,
    grantTypes,
    allowedOrigins,
    lifetimes: input.lifetimes ?? client.lifetimes,
    ...(input.requireMfa === undefined ? {} : { requireMfa: input.requireMfa }),
    tokenEndpointAuthMethod: method,
    ...keys,
    ...(newSecret === null
      ? {}
      : {
          secretHash: hashToken(newSecret),
          previousSecret: null,
          secretEncrypted: method === 'client_secret_jwt' ? sealed(input.sealSecret, newSecret) : null,
        }),
    ...(method !== 'client_secret_jwt' && client.secretEncrypted ? { secretEncrypted: null } : {}),
    ...(input.requirePushedAuthorizationRequests === undefined
      ? {}
      : { requirePushedAuthorizationRequests: input.requirePushedAuthorizationRequests }),
    ...(input.requireDpop === undefined ? {} : { requireDpop: input.requireDpop }),
    ...(input.requestObjectSigningAlg === undefined ? {} : { requestObjectSigningAlg: input.requestObjectSigningAlg }),
    ...(input.admin === undefined ? {} : { admin: input.admin }),
    ...(input.allowedRoles === undefined
      ? {}
      : { allowedRoles: input.allowedRoles && checkRoles(input.allowedRoles, '--roles') }),
  };
  for (const channel of LOGOUT_CHANNELS) {
    const said = input[`${channel}Logout`];
    if (said !== undefined) updated[`${channel}Logout`] = said && checkLogout(said, allowHttp, channel);
  }
  if (input.exchangeAudiences) updated.exchangeAudiences = checkExchangeAudiences(input.exchangeAudiences);
  // The client's own lifetimes, where it has them (seconds); the others follow the server's.
  const { accessToken, refreshToken, idToken } = updated.lifetimes;
  const lifetimes = { access_token_ttl: accessToken, refresh_token_ttl: refreshToken, id_token_ttl: idToken };
  const data = {
    ...{ name, scopes, grant_types: grantTypes, allowed_origins: allowedOrigins, redirect_uris: redirectUris },
    ...Object.fromEntries(Object.entries(lifetimes).filter((entry): entry is [string, number] => entry[1] !== null)),
    ...(input.requireMfa === undefined ? {} : { require_mfa: input.requireMfa }),
    ...(input.authMethod ? { token_endpoint_auth_method: method } : {}),
    ...(input.keys ? { jwks: keys.jwks ? 'inline' : (keys.jwksUri ?? '') } : {}),
    ...(newSecret === null ? {} : { secret_issued: true }),
    ...(input.requirePushedAuthorizationRequests === undefined
      ? {}
      : { require_pushed_authorization_requests: input.requirePushedAuthorizationRequests }),
    ...(input.requireDpop === undefined ? {} : { dpop_bound_access_tokens: input.requireDpop }),
    ...(input.requestObjectSigningAlg === undefined
      ? {}
      : { request_object_signing_alg: input.requestObjectSigningAlg ?? 'any' }),
    ...(input.admin === undefined ? {} : { admin: input.admin }),
    ...(input.allowedRoles === undefined ? {} : { roles: updated.allowedRoles ?? 'all' }),
    ...(input.backchannelLogout === undefined ? {} : { backchannel_logout_uri: input.backchannelLogout?.uri ?? '' }),
    ...(input.frontchannelLogout === undefined ? {} : { frontchannel_logout_uri: input.frontchannelLogout?.uri ?? '' }),
    ...(input.exchangeAudiences === undefined ? {} : { exchange_audiences: updated.exchangeAudiences ?? [] }),
  };

  await store.updateClient(updated, securityEvent('client.updated', now, { clientId, requester, data }));
  return { client: updated, warnings: warnings.filter((w) => w !== undefined), clientSecret: newSecret };
}

/**
 * A new secret; the old one keeps working for `grace` seconds (0: it stops at once), so the client
 * can be given the new one without downtime: `previousUntil` says until when, null when it stopped
 * (always for a client_secret_jwt client, whose assertions are checked with its current secret only).
 */
export async function rotateClientSecret(
  store: ClientStore,
  clientId: string,
  now = Math.floor(Date.now() / 1000),
  requester: Requester = CLI,
  grace = 0,
  sealSecret?: (secret: string) => string,
): Promise<{ secret: string; previousUntil: number | null }> {
  const client = await findClient(store, clientId);
  if (client.tokenEndpointAuthMethod === 'none') throw new AdminError(`client ${clientId} is public and has no secret`);
  if (client.tokenEndpointAuthMethod === 'private_key_jwt') {
    throw new AdminError(`client ${clientId} authenticates with its key (private_key_jwt) and has no secret`);
  }
  const secret = randomToken();
  // A client_secret_jwt client's assertions are checked with its current secret only: no grace period.
  const jwt = client.tokenEndpointAuthMethod === 'client_secret_jwt';
  const previous =
    grace > 0 && !jwt && client.secretHash !== null ? { hash: client.secretHash, expiresAt: now + grace } : null;
  const event = securityEvent('client.secret_rotated', now, { clientId, requester, data: { grace } });
  const encrypted = jwt ? sealed(sealSecret, secret) : undefined;
  await store.setClientSecretHash(clientId, hashToken(secret), event, previous, encrypted);
  return { secret, previousUntil: previous?.expiresAt ?? null };
}

/** Deletes the client (`client.deleted`): its grants and tokens end with it. */
export async function deleteClient(
  store: Pick<ClientStore, 'getClient' | 'deleteClient'>,
  clientId: string,
  options: { now: number; requester?: Requester },
): Promise<void> {
  const { now, requester = CLI } = options;
  await findClient(store, clientId);
  const deleted = securityEvent('client.deleted', now, { clientId, requester });
  if (!(await store.deleteClient(clientId, deleted))) throw new NotFoundError(`no client ${clientId}`);
}
