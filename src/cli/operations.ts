// Operations shared by the CLI and the development demo seeding: plain functions over the store.
import { NotFoundError } from '../admin/errors.ts';
import { checkRoles } from '../admin/roles.ts';
import { emailProblem, heldClaimsAfter, usernameProblem } from '../admin/users.ts';
import type { HeldClaimChanges } from '../tokens/held-claims.ts';
import { CLI, type Requester, securityEvent } from '../events/index.ts';
import type { Config } from '../config/index.ts';
import {
  type BackchannelLogout,
  type Client,
  type ClientStore,
  SERVER_LIFETIMES,
  type TokenEndpointAuthMethod,
} from '../store/clients.ts';
import type { TokenLifetimes } from '../store/clients.ts';
import type { User, UserStore } from '../store/users.ts';
import {
  backchannelLogoutUriProblem,
  normalizeRedirectUri,
  redirectUriProblem,
} from '../oauth/registration/redirect-rules.ts';
import { hashToken, newId, randomToken } from '../tokens/opaque.ts';
import { checkKeysFor, ClientKeysError, type ConfidentialAuthMethod } from './client-keys.ts';

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface CreateClientInput {
  name: string;
  redirectUris: string[];
  postLogoutRedirectUris?: string[];
  scopes: string[];
  public: boolean;
  firstParty?: boolean;
  authMethod?: ConfidentialAuthMethod;
  alg?: 'RS256' | 'ES256';
  /** Its public keys (private_key_jwt, request objects): a JWK Set or where it is published. */
  keys?: Pick<Client, 'jwks' | 'jwksUri'> | undefined;
  /** client_secret_jwt: how its secret is encrypted for the server to keep (src/oauth/client-auth/assertion.ts). */
  sealSecret?: (secret: string) => string;
  /** Its authorization requests must be pushed (RFC 9126 §6). */
  requirePushedAuthorizationRequests?: boolean;
  /** The alg its request objects must be signed with (`none`: unsigned); null or absent: any asymmetric. */
  requestObjectSigningAlg?: string | null | undefined;
  /** RFC 7591 grant type names; authorization_code and refresh_token by default. */
  grantTypes?: string[];
  /** Origins that may call the token endpoints from a browser, besides a public client's redirect URIs'. */
  allowedOrigins?: string[];
  /** Its own token lifetimes (./commands/lifetimes.ts); the server's by default. */
  lifetimes?: TokenLifetimes;
  /** Its sign-ins need two factors (`--require-mfa`). */
  requireMfa?: boolean;
  /** Marked as an admin client (`--admin`): it may hold the `admin` scope. */
  admin?: boolean;
  /** The roles it may see (`--roles`); absent: every role. */
  allowedRoles?: string[];
  /** Back-Channel Logout 1.0 (`--backchannel-logout-uri`, `--backchannel-logout-session-required`). */
  backchannelLogout?: BackchannelLogout;
}

/**
 * A backchannel_logout_uri: https, or plain http where redirect URIs may be (and on loopback), as a
 * redirect URI is checked.
 */
function checkBackchannelLogout(logout: BackchannelLogout, allowHttp: boolean): BackchannelLogout {
  const { uri } = logout;
  const problem = backchannelLogoutUriProblem(uri);
  const plainHttp =
    uri.startsWith('http:') && backchannelLogoutUriProblem(uri.replace(/^http:/, 'https:')) === undefined;
  if (problem && !(allowHttp && plainHttp)) throw new UsageError(`--backchannel-logout-uri: "${uri}" ${problem}`);
  return logout;
}

/** An origin as a browser sends it: http(s)://host[:port], nothing after. */
function checkOrigin(origin: string): string {
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.origin !== origin) {
    throw new UsageError(`--allowed-origin: "${origin}" is not an origin (https://app.example.com, no path)`);
  }
  return origin;
}

/** The grant types of a client: known names, refresh with code, no client_credentials for a public client. */
function checkGrantTypes(grantTypes: string[], isPublic: boolean): string[] {
  const unique = [...new Set(grantTypes)];
  const unknownGrant = unique.filter((g) => !GRANT_TYPES.includes(g));
  if (unknownGrant.length > 0 || unique.length === 0) {
    throw new UsageError(`--grant-types: a comma-separated list of ${GRANT_TYPES.join(', ')}`);
  }
  if (unique.includes('refresh_token') && !unique.includes('authorization_code')) {
    throw new UsageError('--grant-types: refresh_token comes with authorization_code');
  }
  // RFC 6749 §4.4: client_credentials is for confidential clients only.
  if (isPublic && unique.includes('client_credentials')) {
    throw new UsageError('--grant-types: a --public client cannot use client_credentials');
  }
  return unique;
}

export const GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials'];

/** At least one scope, each one Tessera knows. */
function checkScopes(scopes: readonly string[], config: Pick<Config, 'scopes'>): void {
  if (scopes.length === 0) throw new UsageError('--scope must name at least one scope');
  const unknown = scopes.filter((s) => !config.scopes.has(s));
  if (unknown.length > 0)
    throw new UsageError(`unknown scope: ${unknown.join(' ')} (known: ${[...config.scopes.keys()].join(' ')})`);
}

/**
 * The one set of redirect URI rules (src/oauth/registration/redirect-rules.ts, as for clients that
 * register themselves); plain http to a host other than loopback only with `allowHttp`
 * (TESSERA_ALLOW_HTTP_REDIRECT_URIS, never in production). What deserves a warning, or undefined.
 */
function checkRedirectUri(uri: string, option: string, allowHttp: boolean): string | undefined {
  const problem = redirectUriProblem(uri);
  const url = URL.parse(uri);
  const plainHttp = url?.protocol === 'http:' && redirectUriProblem(uri.replace(/^http:/, 'https:')) === undefined;
  if (problem && !(allowHttp && plainHttp)) throw new UsageError(`${option}: "${uri}" ${problem}`);
  if (url?.protocol === 'http:' && url.hostname === 'localhost') {
    return (
      `${option}: "${uri}": localhost may resolve to another address than the app listens on; ` +
      'http://127.0.0.1 is what RFC 8252 §8.3 recommends'
    );
  }
  return plainHttp && problem ? `${option}: "${uri}" is plain http (TESSERA_ALLOW_HTTP_REDIRECT_URIS)` : undefined;
}

export async function createClient(
  store: ClientStore,
  config: Pick<Config, 'scopes'> & Partial<Pick<Config, 'allowHttpRedirectUris'>>,
  input: CreateClientInput,
  now = Math.floor(Date.now() / 1000),
  requester: Requester = CLI,
): Promise<{ client: Client; clientSecret: string | null; warnings: string[] }> {
  if (input.name.trim() === '') throw new UsageError('--name must not be empty');
  const grantTypes = checkGrantTypes(input.grantTypes ?? ['authorization_code', 'refresh_token'], input.public);
  const allowedOrigins = [...new Set((input.allowedOrigins ?? []).map(checkOrigin))];
  // A client with only client_credentials redirects nowhere.
  if (input.redirectUris.length === 0 && grantTypes.includes('authorization_code')) {
    throw new UsageError('at least one --redirect-uri is required');
  }
  const allowHttp = config.allowHttpRedirectUris ?? false;
  const warnings = [
    ...input.redirectUris.map((uri) => checkRedirectUri(uri, '--redirect-uri', allowHttp)),
    ...(input.postLogoutRedirectUris ?? []).map((uri) =>
      checkRedirectUri(uri, '--post-logout-redirect-uri', allowHttp),
    ),
  ].filter((warning) => warning !== undefined);
  checkScopes(input.scopes, config);
  if (input.public && input.authMethod) throw new UsageError('--auth-method does not apply to a --public client');
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
    ...(input.requestObjectSigningAlg ? { requestObjectSigningAlg: input.requestObjectSigningAlg } : {}),
    ...(input.admin ? { admin: true } : {}),
    ...(input.allowedRoles ? { allowedRoles: checkRoles(input.allowedRoles, '--roles') } : {}),
    ...(input.backchannelLogout
      ? { backchannelLogout: checkBackchannelLogout(input.backchannelLogout, allowHttp) }
      : {}),
  };
  const data = {
    name: client.name,
    public: clientSecret === null,
    scopes: client.scopes,
    ...(input.requireMfa ? { require_mfa: true } : {}),
    ...(input.requirePushedAuthorizationRequests ? { require_pushed_authorization_requests: true } : {}),
    ...(client.admin ? { admin: true } : {}),
    ...(client.allowedRoles ? { roles: client.allowedRoles } : {}),
  };
  await store.createClient(
    client,
    securityEvent('client.created', now, { clientId: client.clientId, requester, data }),
  );
  return { client, clientSecret, warnings };
}

/** A ClientKeysError (./client-keys.ts) as the command line's usage error. */
function usage<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof ClientKeysError) throw new UsageError(err.message);
    throw err;
  }
}

function sealed(seal: ((secret: string) => string) | undefined, secret: string): string {
  if (!seal) throw new TypeError('client_secret_jwt: the secret cannot be kept without TESSERA_SECRET');
  return seal(secret);
}

/** Changes a client's grant types and allowed origins (`tessera clients update`). */
export interface UpdateClientInput {
  name?: string | undefined;
  /** Replaces the redirect URIs (the same rules as at creation). */
  redirectUris?: string[] | undefined;
  postLogoutRedirectUris?: string[] | undefined;
  scopes?: string[] | undefined;
  grantTypes?: string[] | undefined;
  allowedOrigins?: string[] | undefined;
  lifetimes?: TokenLifetimes | undefined;
  /** `--require-mfa` or `--no-require-mfa`. */
  requireMfa?: boolean | undefined;
  /** A new way to authenticate: to a secret method from none, or to client_secret_jwt, a new secret is issued. */
  authMethod?: ConfidentialAuthMethod | undefined;
  /** Replaces its public keys. */
  keys?: Pick<Client, 'jwks' | 'jwksUri'> | undefined;
  sealSecret?: (secret: string) => string;
  /** `--require-pushed-authorization-requests` or `--no-require-pushed-authorization-requests`. */
  requirePushedAuthorizationRequests?: boolean | undefined;
  /** `--request-object-signing-alg`: an alg, `none`, or null for any asymmetric one. */
  requestObjectSigningAlg?: string | null | undefined;
  /** `--admin` or `--no-admin`. */
  admin?: boolean | undefined;
  /** `--roles a,b`, or null (`--all-roles`) for every role. */
  allowedRoles?: string[] | null | undefined;
  /** A new backchannel_logout_uri and its session_required, or null to remove it (`--no-backchannel-logout-uri`). */
  backchannelLogout?: BackchannelLogout | null | undefined;
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
  const client = await store.getClient(clientId, { suspended: true });
  if (!client) throw new UsageError(`no client ${clientId}`);
  const isPublic = client.tokenEndpointAuthMethod === 'none';
  if (isPublic && input.authMethod) throw new UsageError('--auth-method does not apply to a public client');
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
    throw new UsageError('authorization_code needs a redirect URI, and this client would have none');
  }
  const scopes = input.scopes ? [...new Set(input.scopes)] : client.scopes;
  if (config) checkScopes(scopes, config);
  else if (scopes.length === 0) throw new UsageError('--scope must name at least one scope');
  const name = input.name === undefined ? client.name : input.name.trim();
  if (name === '') throw new UsageError('--name must not be empty');
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
    ...(input.requestObjectSigningAlg === undefined ? {} : { requestObjectSigningAlg: input.requestObjectSigningAlg }),
    ...(input.admin === undefined ? {} : { admin: input.admin }),
    ...(input.allowedRoles === undefined
      ? {}
      : { allowedRoles: input.allowedRoles && checkRoles(input.allowedRoles, '--roles') }),
  };
  if (input.backchannelLogout === null) updated.backchannelLogout = null;
  else if (input.backchannelLogout)
    updated.backchannelLogout = checkBackchannelLogout(input.backchannelLogout, allowHttp);
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
    ...(input.requestObjectSigningAlg === undefined
      ? {}
      : { request_object_signing_alg: input.requestObjectSigningAlg ?? 'any' }),
    ...(input.admin === undefined ? {} : { admin: input.admin }),
    ...(input.allowedRoles === undefined ? {} : { roles: updated.allowedRoles ?? 'all' }),
    ...(input.backchannelLogout === undefined ? {} : { backchannel_logout_uri: input.backchannelLogout?.uri ?? '' }),
  };

  await store.updateClient(updated, securityEvent('client.updated', now, { clientId, requester, data }));
  return { client: updated, warnings: warnings.filter((w) => w !== undefined), clientSecret: newSecret };
}

/**
 * A new secret; the old one keeps working for `grace` seconds (0: it stops at once), so the client
 * can be given the new one without downtime.
 */
export async function rotateClientSecret(
  store: ClientStore,
  clientId: string,
  now = Math.floor(Date.now() / 1000),
  requester: Requester = CLI,
  grace = 0,
  sealSecret?: (secret: string) => string,
): Promise<string> {
  const client = await store.getClient(clientId, { suspended: true });
  if (!client) throw new UsageError(`no client ${clientId}`);
  if (client.tokenEndpointAuthMethod === 'none') throw new UsageError(`client ${clientId} is public and has no secret`);
  if (client.tokenEndpointAuthMethod === 'private_key_jwt') {
    throw new UsageError(`client ${clientId} authenticates with its key (private_key_jwt) and has no secret`);
  }
  const secret = randomToken();
  // A client_secret_jwt client's assertions are checked with its current secret only: no grace period.
  const jwt = client.tokenEndpointAuthMethod === 'client_secret_jwt';
  const previous =
    grace > 0 && !jwt && client.secretHash !== null ? { hash: client.secretHash, expiresAt: now + grace } : null;
  const event = securityEvent('client.secret_rotated', now, { clientId, requester, data: { grace } });
  const encrypted = jwt ? sealed(sealSecret, secret) : undefined;
  await store.setClientSecretHash(clientId, hashToken(secret), event, previous, encrypted);
  return secret;
}

/** Deletes the client (`client.deleted`): its grants and tokens end with it. */
export async function deleteClient(
  store: Pick<ClientStore, 'getClient' | 'deleteClient'>,
  clientId: string,
  options: { now: number; requester?: Requester },
): Promise<void> {
  const { now, requester = CLI } = options;
  if (!(await store.getClient(clientId, { suspended: true }))) throw new NotFoundError(`no client ${clientId}`);
  const deleted = securityEvent('client.deleted', now, { clientId, requester });
  if (!(await store.deleteClient(clientId, deleted))) throw new NotFoundError(`no client ${clientId}`);
}

export interface CreateUserInput {
  username: string;
  email: string;
  name?: string | undefined;
  givenName?: string | undefined;
  familyName?: string | undefined;
  emailVerified?: boolean;
  passwordHash?: string | null;
  /** Roles given at once (`--role`, `--admin`: src/admin/roles.ts). */
  roles?: string[];
  /** The standard claims held beyond the names (src/tokens/held-claims.ts). */
  claims?: HeldClaimChanges;
}

export async function createUser(
  store: UserStore,
  _config: unknown,
  input: CreateUserInput,
  now = Math.floor(Date.now() / 1000),
  requester: Requester = CLI,
): Promise<User> {
  const problem = usernameProblem(input.username);
  if (problem) throw new UsageError(`--username: ${problem}`);
  const emailIsNot = emailProblem(input.email);
  if (emailIsNot) throw new UsageError(`--email: ${emailIsNot}`);
  if (await store.getUserByUsername(input.username))
    throw new UsageError(`a user named ${input.username} exists already`);
  const { claims } = heldClaimsAfter(null, input.claims);
  const user: User = {
    id: newId(),
    username: input.username,
    email: input.email,
    emailVerified: input.emailVerified ?? true,
    name: input.name ?? null,
    givenName: input.givenName ?? null,
    familyName: input.familyName ?? null,
    passwordHash: input.passwordHash ?? null,
    disabled: false,
    createdAt: now,
    updatedAt: now,
    roles: checkRoles(input.roles ?? [], '--role'),
    claims,
  };
  const data = user.roles.length > 0 ? { roles: user.roles } : undefined;
  await store.createUser(
    user,
    securityEvent('user.created', now, { userId: user.id, requester, ...(data ? { data } : {}) }),
  );
  return user;
}
