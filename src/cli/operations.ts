// Operations shared by the CLI and the development demo seeding: plain functions over the store.
import { emailProblem, usernameProblem } from '../admin/users.ts';
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
  authMethod?: Exclude<TokenEndpointAuthMethod, 'none'>;
  alg?: 'RS256' | 'ES256';
  /** RFC 7591 grant type names; authorization_code and refresh_token by default. */
  grantTypes?: string[];
  /** Origins that may call the token endpoints from a browser, besides a public client's redirect URIs'. */
  allowedOrigins?: string[];
  /** Its own token lifetimes (./commands/lifetimes.ts); the server's by default. */
  lifetimes?: TokenLifetimes;
  /** Its sign-ins need two factors (`--require-mfa`). */
  requireMfa?: boolean;
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

  const clientSecret = input.public ? null : randomToken();
  const client: Client = {
    clientId: newId(),
    secretHash: clientSecret === null ? null : hashToken(clientSecret),
    name: input.name.trim(),
    redirectUris: [...new Set(input.redirectUris.map(normalizeRedirectUri))],
    postLogoutRedirectUris: [...new Set((input.postLogoutRedirectUris ?? []).map(normalizeRedirectUri))],
    scopes: [...new Set(input.scopes)],
    grantTypes,
    allowedOrigins,
    tokenEndpointAuthMethod: input.public ? 'none' : (input.authMethod ?? 'client_secret_basic'),
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
    ...(input.backchannelLogout
      ? { backchannelLogout: checkBackchannelLogout(input.backchannelLogout, allowHttp) }
      : {}),
  };
  const data = {
    name: client.name,
    public: clientSecret === null,
    scopes: client.scopes,
    ...(input.requireMfa ? { require_mfa: true } : {}),
  };
  await store.createClient(
    client,
    securityEvent('client.created', now, { clientId: client.clientId, requester, data }),
  );
  return { client, clientSecret, warnings };
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
): Promise<{ client: Client; warnings: string[] }> {
  const client = await store.getClient(clientId, { suspended: true });
  if (!client) throw new UsageError(`no client ${clientId}`);
  const isPublic = client.tokenEndpointAuthMethod === 'none';
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
    ...(input.backchannelLogout === undefined ? {} : { backchannel_logout_uri: input.backchannelLogout?.uri ?? '' }),
  };

  await store.updateClient(updated, securityEvent('client.updated', now, { clientId, requester, data }));
  return { client: updated, warnings: warnings.filter((w) => w !== undefined) };
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
): Promise<string> {
  const client = await store.getClient(clientId, { suspended: true });
  if (!client) throw new UsageError(`no client ${clientId}`);
  if (client.tokenEndpointAuthMethod === 'none') throw new UsageError(`client ${clientId} is public and has no secret`);
  const secret = randomToken();
  const previous = grace > 0 && client.secretHash !== null ? { hash: client.secretHash, expiresAt: now + grace } : null;
  const event = securityEvent('client.secret_rotated', now, { clientId, requester, data: { grace } });
  await store.setClientSecretHash(clientId, hashToken(secret), event, previous);
  return secret;
}

export interface CreateUserInput {
  username: string;
  email: string;
  name?: string | undefined;
  givenName?: string | undefined;
  familyName?: string | undefined;
  emailVerified?: boolean;
  passwordHash?: string | null;
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
  };
  await store.createUser(user, securityEvent('user.created', now, { userId: user.id, requester }));
  return user;
}
