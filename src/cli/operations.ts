// Operations shared by the CLI and the development demo seeding: plain functions over the store.
import { CLI, type Requester, securityEvent } from '../events/index.ts';
import type { Config } from '../config/index.ts';
import type { Client, ClientStore, TokenEndpointAuthMethod, User, UserStore } from '../store/store.ts';
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
}

export const GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials'];

/** RFC 6749 §3.1.2: an absolute URI without a fragment. */
function checkRedirectUri(uri: string, option: string): void {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new UsageError(`${option}: "${uri}" is not an absolute URI`);
  }
  if (uri.includes('#')) throw new UsageError(`${option}: "${uri}" must not contain a fragment`);
  if (url.protocol === 'javascript:' || url.protocol === 'data:')
    throw new UsageError(`${option}: "${uri}" has a forbidden scheme`);
}

export async function createClient(
  store: ClientStore,
  config: Pick<Config, 'scopes'>,
  input: CreateClientInput,
  now = Math.floor(Date.now() / 1000),
  requester: Requester = CLI,
): Promise<{ client: Client; clientSecret: string | null }> {
  if (input.name.trim() === '') throw new UsageError('--name must not be empty');
  const grantTypes = [...new Set(input.grantTypes ?? ['authorization_code', 'refresh_token'])];
  const unknownGrant = grantTypes.filter((g) => !GRANT_TYPES.includes(g));
  if (unknownGrant.length > 0 || grantTypes.length === 0) {
    throw new UsageError(`--grant-types: a comma-separated list of ${GRANT_TYPES.join(', ')}`);
  }
  if (grantTypes.includes('refresh_token') && !grantTypes.includes('authorization_code')) {
    throw new UsageError('--grant-types: refresh_token comes with authorization_code');
  }
  // RFC 6749 §4.4: client_credentials is for confidential clients only.
  if (input.public && grantTypes.includes('client_credentials')) {
    throw new UsageError('--grant-types: a --public client cannot use client_credentials');
  }
  // A client with only client_credentials redirects nowhere.
  if (input.redirectUris.length === 0 && grantTypes.includes('authorization_code')) {
    throw new UsageError('at least one --redirect-uri is required');
  }
  for (const uri of input.redirectUris) checkRedirectUri(uri, '--redirect-uri');
  for (const uri of input.postLogoutRedirectUris ?? []) checkRedirectUri(uri, '--post-logout-redirect-uri');
  if (input.scopes.length === 0) throw new UsageError('--scope must name at least one scope');
  const unknown = input.scopes.filter((s) => !config.scopes.has(s));
  if (unknown.length > 0)
    throw new UsageError(`unknown scope: ${unknown.join(' ')} (known: ${[...config.scopes.keys()].join(' ')})`);
  if (input.public && input.authMethod) throw new UsageError('--auth-method does not apply to a --public client');

  const clientSecret = input.public ? null : randomToken();
  const client: Client = {
    clientId: newId(),
    secretHash: clientSecret === null ? null : hashToken(clientSecret),
    name: input.name.trim(),
    redirectUris: [...new Set(input.redirectUris)],
    postLogoutRedirectUris: [...new Set(input.postLogoutRedirectUris ?? [])],
    scopes: [...new Set(input.scopes)],
    grantTypes,
    tokenEndpointAuthMethod: input.public ? 'none' : (input.authMethod ?? 'client_secret_basic'),
    firstParty: input.firstParty ?? false,
    idTokenSignedResponseAlg: input.alg ?? null,
    createdAt: now,
  };
  const data = { name: client.name, public: clientSecret === null, scopes: client.scopes };
  await store.createClient(
    client,
    securityEvent('client.created', now, { clientId: client.clientId, requester, data }),
  );
  return { client, clientSecret };
}

export async function rotateClientSecret(
  store: ClientStore,
  clientId: string,
  now = Math.floor(Date.now() / 1000),
  requester: Requester = CLI,
): Promise<string> {
  const client = await store.getClient(clientId);
  if (!client) throw new UsageError(`no client ${clientId}`);
  if (client.tokenEndpointAuthMethod === 'none') throw new UsageError(`client ${clientId} is public and has no secret`);
  const secret = randomToken();
  await store.setClientSecretHash(
    clientId,
    hashToken(secret),
    securityEvent('client.secret_rotated', now, { clientId, requester }),
  );
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
  if (!/^[A-Za-z0-9._@+-]{1,64}$/.test(input.username)) {
    throw new UsageError('--username: 1 to 64 characters of letters, digits and . _ @ + -');
  }
  if (!/^[^\s@]+@[^\s@]+$/.test(input.email)) throw new UsageError(`--email: "${input.email}" is not an email address`);
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
