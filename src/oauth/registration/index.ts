// Clients registering themselves: RFC 7591 dynamic client registration at /oauth2/register, and
// RFC 7592 management of a registration at its registration_client_uri with the registration access
// token (stored hashed, replaced by a new one with every answer that shows it). TESSERA_REGISTRATION
// says who may register: with a Tessera access token carrying `apps` (the client then belongs to the
// token's user and is listed on their account page), or anyone, for agents. Either way registrations
// are counted per source address, and a client gets no scope outside TESSERA_REGISTRATION_SCOPES and
// no grant type outside TESSERA_REGISTRATION_GRANT_TYPES (by default a user's sign-in and its refresh:
// no client_credentials). A registered client is an ordinary client, marked as not vetted by the
// operator; an update (RFC 7592) may keep or narrow what it has, never widen it, so that what the
// operator narrowed with `tessera clients update` stays narrowed.
import type { Config } from '../../config/index.ts';
import { InvalidClientMetadata, InvalidToken, TooManyAttempts } from '../../errors/index.ts';
import { type Requester, securityEvent } from '../../events/index.ts';
import { type Client, type ClientStore, SERVER_LIFETIMES } from '../../store/clients.ts';
import type { ThrottleStore } from '../../store/throttles.ts';
import { hashToken, newId, randomToken, safeEqual } from '../../tokens/opaque.ts';
import { addressKey, Throttle } from '../../authn/throttle.ts';
import { bearerToken, type TokenStatusDeps, userWithScope } from '../token-status.ts';
import { checkClientMetadata, type ClientMetadata } from './metadata.ts';

export interface RegistrationDeps extends TokenStatusDeps {
  config: TokenStatusDeps['config'] & Pick<Config, 'registration'>;
  store: TokenStatusDeps['store'] & ClientStore & ThrottleStore;
}

/** What a registration endpoint answers: the status and the client information response (RFC 7591 §3.2.1). */
export interface RegistrationAnswer {
  status: 200 | 201 | 204;
  body?: Record<string, unknown>;
}

const HOUR = 3600;

/** The registering user: the initial access token's (RFC 7591 §3), required unless registration is open. */
async function registeringUser(deps: RegistrationDeps, authorization: string | undefined, now: number) {
  if (authorization === undefined && deps.config.registration.mode === 'open') return null;
  return (await userWithScope(deps, authorization, 'apps', now)).id;
}

/**
 * RFC 7591 §3: at most TESSERA_REGISTRATION_LIMIT registrations per source address (an IPv6 /64) per
 * hour, each counted before it is made (../throttle.ts), so that parallel requests cannot pass the
 * limit; a request refused for its metadata gives its count back.
 */
async function countRegistration(deps: RegistrationDeps, requester: Requester, now: number) {
  const address = addressKey(requester.ip);
  const limit = deps.config.registration.perHour;
  const policy = { freeFailures: limit, lockAfter: limit, lockSeconds: HOUR, window: HOUR };
  const key = { key: `register:${address}`, subject: `register:${address}`, policy, onSuccess: 'keep' as const };
  const attempt = await new Throttle(deps.store).begin([{ ...key, onFailure: 'giveBack' }], now);
  if (attempt.refused) {
    const { retryAfter } = attempt.refused;
    throw new TooManyAttempts('too many registrations from this address; try again later', {
      retryAfter,
      key: key.key,
    });
  }
  return attempt;
}

function nameOf(metadata: ClientMetadata): string {
  return metadata.name ?? URL.parse(metadata.redirectUris[0] ?? '')?.host ?? 'Unnamed application';
}

/** POST /oauth2/register (RFC 7591 §3.1). */
export async function registerClient(
  deps: RegistrationDeps,
  authorization: string | undefined,
  body: unknown,
  requester: Requester,
  now: number,
): Promise<RegistrationAnswer> {
  const ownerId = await registeringUser(deps, authorization, now);
  const counted = await countRegistration(deps, requester, now);
  const { scopes, grantTypes } = deps.config.registration;
  let metadata: ClientMetadata;
  try {
    metadata = checkClientMetadata(body, { scopes, grantTypes });
  } catch (err) {
    await counted.failed();
    throw err;
  }
  const method = metadata.tokenEndpointAuthMethod;
  const clientSecret = method === 'none' || method === 'private_key_jwt' ? null : randomToken();
  const registrationToken = randomToken();
  const client: Client = {
    clientId: newId(),
    secretHash: clientSecret === null ? null : hashToken(clientSecret),
    name: nameOf(metadata),
    redirectUris: metadata.redirectUris,
    postLogoutRedirectUris: metadata.postLogoutRedirectUris,
    scopes: metadata.scopes,
    grantTypes: metadata.grantTypes,
    allowedOrigins: [],
    tokenEndpointAuthMethod: metadata.tokenEndpointAuthMethod,
    firstParty: false,
    idTokenSignedResponseAlg: metadata.idTokenSignedResponseAlg,
    ...(metadata.backchannelLogout ? { backchannelLogout: metadata.backchannelLogout } : {}),
    ...(metadata.frontchannelLogout ? { frontchannelLogout: metadata.frontchannelLogout } : {}),
    createdAt: now,
    registeredVia: 'dynamic',
    ownerId,
    registrationTokenHash: hashToken(registrationToken),
    metadata: metadata.description,
    previousSecret: null,
    lifetimes: SERVER_LIFETIMES,
    ...(metadata.jwks ? { jwks: metadata.jwks } : {}),
    ...(metadata.jwksUri ? { jwksUri: metadata.jwksUri } : {}),
    ...(metadata.requirePushedAuthorizationRequests ? { requirePushedAuthorizationRequests: true } : {}),
    ...(metadata.requireDpop ? { requireDpop: true } : {}),
    ...(metadata.requestObjectSigningAlg ? { requestObjectSigningAlg: metadata.requestObjectSigningAlg } : {}),
  };
  const data = { name: client.name, public: method === 'none', scopes: client.scopes };
  const event = securityEvent('client.registered', now, {
    userId: ownerId,
    clientId: client.clientId,
    requester,
    data,
  });
  await deps.store.createClient(client, event);
  return { status: 201, body: clientInformation(deps.config.issuer, client, { clientSecret, registrationToken }) };
}

/** The client a registration access token manages (RFC 7592 §2); 401 for anything else. */
async function managedClient(deps: RegistrationDeps, clientId: string, authorization: string | undefined) {
  const token = bearerToken(authorization);
  if (token === undefined) throw new InvalidToken('the registration access token is required');
  const client = await deps.store.getClient(clientId);
  // §2: an unknown client, or a token that is not its own, answers 401 alike.
  if (!client?.registrationTokenHash || !safeEqual(hashToken(token), client.registrationTokenHash)) {
    throw new InvalidToken('the registration access token is not valid for this client');
  }
  return client;
}

/** GET {registration_client_uri} (RFC 7592 §2.1): the registration, with a new registration access token. */
export async function readRegistration(
  deps: RegistrationDeps,
  clientId: string,
  authorization: string | undefined,
): Promise<RegistrationAnswer> {
  const client = await managedClient(deps, clientId, authorization);
  const registrationToken = randomToken();
  const updated = { ...client, registrationTokenHash: hashToken(registrationToken) };
  await deps.store.updateClient(updated);
  return {
    status: 200,
    body: clientInformation(deps.config.issuer, updated, { clientSecret: null, registrationToken }),
  };
}

/** Fields a client may not send in an update (RFC 7592 §2.2). */
const SERVER_FIELDS = [
  'registration_access_token',
  'registration_client_uri',
  'client_secret_expires_at',
  'client_id_issued_at',
];

/**
 * PUT {registration_client_uri} (RFC 7592 §2.2): the metadata replaced whole; omitted fields take their
 * defaults, and an omitted scope keeps the client's scopes. Never more than the client has now.
 */
export async function replaceRegistration(
  deps: RegistrationDeps,
  clientId: string,
  authorization: string | undefined,
  body: unknown,
  requester: Requester,
  now: number,
): Promise<RegistrationAnswer> {
  const client = await managedClient(deps, clientId, authorization);
  const json = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (json.client_id !== clientId) throw new InvalidClientMetadata("client_id must be the client's own");
  const sent = SERVER_FIELDS.filter((field) => field in json);
  if (sent.length > 0) throw new InvalidClientMetadata(`an update must not include ${sent.join(', ')}`);
  if (json.client_secret !== undefined) {
    const matches =
      typeof json.client_secret === 'string' &&
      client.secretHash !== null &&
      safeEqual(hashToken(json.client_secret), client.secretHash);
    if (!matches) throw new InvalidClientMetadata("client_secret does not match the client's");
  }
  // RFC 7592 §2.2 lets the server replace or refuse values: no scope or grant type it does not have now.
  const metadata = checkClientMetadata(body, { scopes: client.scopes, grantTypes: client.grantTypes });
  // A client that becomes confidential gets a secret; one that becomes public loses it.
  const needsSecret = !['none', 'private_key_jwt'].includes(metadata.tokenEndpointAuthMethod);
  const clientSecret = needsSecret && client.secretHash === null ? randomToken() : null;
  const registrationToken = randomToken();
  const updated: Client = {
    ...client,
    secretHash: !needsSecret ? null : clientSecret !== null ? hashToken(clientSecret) : client.secretHash,
    name: nameOf(metadata),
    redirectUris: metadata.redirectUris,
    postLogoutRedirectUris: metadata.postLogoutRedirectUris,
    scopes: metadata.scopes,
    grantTypes: metadata.grantTypes,
    tokenEndpointAuthMethod: metadata.tokenEndpointAuthMethod,
    idTokenSignedResponseAlg: metadata.idTokenSignedResponseAlg,
    // RFC 7592 §2.2: the update replaces the metadata; left out, the back- and front-channel logouts go.
    backchannelLogout: metadata.backchannelLogout,
    frontchannelLogout: metadata.frontchannelLogout,
    registrationTokenHash: hashToken(registrationToken),
    metadata: metadata.description,
    jwks: metadata.jwks,
    jwksUri: metadata.jwksUri,
    requirePushedAuthorizationRequests: metadata.requirePushedAuthorizationRequests,
    requireDpop: metadata.requireDpop,
    requestObjectSigningAlg: metadata.requestObjectSigningAlg,
  };
  const data = { name: updated.name, scopes: updated.scopes, grant_types: updated.grantTypes };
  const event = securityEvent('client.updated', now, { userId: client.ownerId, clientId, requester, data });
  await deps.store.updateClient(updated, event);
  return { status: 200, body: clientInformation(deps.config.issuer, updated, { clientSecret, registrationToken }) };
}

/** DELETE {registration_client_uri} (RFC 7592 §2.3): the client goes, and the tokens issued to it. */
export async function deleteRegistration(
  deps: RegistrationDeps,
  clientId: string,
  authorization: string | undefined,
  requester: Requester,
  now: number,
): Promise<RegistrationAnswer> {
  const client = await managedClient(deps, clientId, authorization);
  const event = securityEvent('client.deleted', now, { userId: client.ownerId, clientId, requester });
  await deps.store.deleteClient(clientId, event);
  return { status: 204 };
}

/** The client information response (RFC 7591 §3.2.1, RFC 7592 §3). */
export function clientInformation(
  issuer: string,
  client: Client,
  secrets: { clientSecret: string | null; registrationToken: string },
): Record<string, unknown> {
  return {
    client_id: client.clientId,
    client_id_issued_at: client.createdAt,
    ...(secrets.clientSecret !== null ? { client_secret: secrets.clientSecret, client_secret_expires_at: 0 } : {}),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    ...(client.postLogoutRedirectUris.length > 0 ? { post_logout_redirect_uris: client.postLogoutRedirectUris } : {}),
    grant_types: client.grantTypes,
    response_types: client.grantTypes.includes('authorization_code') ? ['code'] : [],
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    scope: client.scopes.join(' '),
    ...(client.idTokenSignedResponseAlg ? { id_token_signed_response_alg: client.idTokenSignedResponseAlg } : {}),
    ...(client.jwks ? { jwks: client.jwks } : {}),
    ...(client.jwksUri ? { jwks_uri: client.jwksUri } : {}),
    ...(client.requirePushedAuthorizationRequests ? { require_pushed_authorization_requests: true } : {}),
    ...(client.requireDpop ? { dpop_bound_access_tokens: true } : {}),
    ...(client.requestObjectSigningAlg ? { request_object_signing_alg: client.requestObjectSigningAlg } : {}),
    ...(client.backchannelLogout
      ? {
          backchannel_logout_uri: client.backchannelLogout.uri,
          backchannel_logout_session_required: client.backchannelLogout.sessionRequired,
        }
      : {}),
    ...(client.frontchannelLogout
      ? {
          frontchannel_logout_uri: client.frontchannelLogout.uri,
          frontchannel_logout_session_required: client.frontchannelLogout.sessionRequired,
        }
      : {}),
    ...client.metadata,
    registration_client_uri: `${issuer}/oauth2/register/${encodeURIComponent(client.clientId)}`,
    registration_access_token: secrets.registrationToken,
  };
}
