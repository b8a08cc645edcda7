// The pushed authorization request endpoint (RFC 9126): a client authenticates as at the token
// endpoint and sends its authorization request's parameters, which are checked as the authorization
// endpoint checks them (./authorize) before anything is stored; it gets a request_uri, one-time and
// valid for PUSHED_REQUEST_TTL seconds, to send the browser to /oauth2/authorize with (and its
// client_id). The request is kept in the store, so that any instance takes it, and only once.
import { InvalidRequest, InvalidRequestObject, UntrustedRedirectError } from '../errors/index.ts';
import type { Client } from '../store/clients.ts';
import type { OneTimeStore } from '../store/one-time.ts';
import { randomToken } from '../tokens/opaque.ts';
import { type AuthorizeDeps, checkRequest } from './authorize/index.ts';
import { clientAndRedirectUri } from './authorize/checks.ts';
import { PUSHED_REQUEST_URI_PREFIX, pushedRequestId } from './authorize/request-uri.ts';
import { authenticateClient } from './client-auth/index.ts';
import type { ClientAuthGuard } from './client-auth/throttle.ts';
import { type Params, single } from './params.ts';
import { checkScopesForResource, knownResource } from './resources.ts';

/** RFC 9126 §2.2: expires_in, seconds; short, as the request is used at once. */
export const PUSHED_REQUEST_TTL = 60;
/** The most a pushed request's parameters may take, as JSON. */
const MAX_PUSHED_BYTES = 16 * 1024;
/** How the client authenticated: not part of the authorization request. */
const CLIENT_AUTHENTICATION = ['client_secret', 'client_assertion', 'client_assertion_type'];

export interface PushedAuthorizationResponse {
  request_uri: string;
  expires_in: number;
}

export interface ParDeps {
  config: AuthorizeDeps['config'];
  store: AuthorizeDeps['store'] & Pick<OneTimeStore, 'pushRequest'>;
  requestObjects?: AuthorizeDeps['requestObjects'];
}

export async function pushAuthorizationRequest(
  deps: ParDeps,
  authorization: string | undefined,
  body: Params,
  now: number,
  guard?: ClientAuthGuard,
  dpopJkt?: string,
): Promise<PushedAuthorizationResponse> {
  const client = await authenticateClient(deps.store, authorization, body, guard);
  // §2.1: "The request_uri authorization request parameter is one exception, and it MUST NOT be provided."
  if (body.has('request_uri')) throw new InvalidRequest('request_uri must not be pushed');
  let params: Params = new Map([...body].filter(([name]) => !CLIENT_AUTHENTICATION.includes(name)));
  if (body.has('client_id') && single(body, 'client_id') !== client.clientId) {
    throw new InvalidRequest('client_id is not the authenticated client');
  }
  (params as Map<string, readonly string[]>).set('client_id', [client.clientId]);
  // A request object (RFC 9101 §6): pushed, its parameters are what is stored.
  if (deps.requestObjects && params.has('request')) params = await requestObject(deps, client, params, now);
  // RFC 9449 §10.1: a DPoP proof at the push binds the code to its key, as dpop_jkt does.
  if (dpopJkt !== undefined) {
    if (params.has('dpop_jkt') && single(params, 'dpop_jkt') !== dpopJkt) {
      throw new InvalidRequest('dpop_jkt does not match the DPoP proof');
    }
    params = new Map([...params, ['dpop_jkt', [dpopJkt]]]);
  }
  const { redirectUri } = await redirectUriOf(deps, client, params);
  const { request } = checkRequest(deps.config, client, redirectUri, params, true);
  if (request.resource !== null) {
    checkScopesForResource(request.scopes, await knownResource(deps.store, request.resource));
  }
  const stored = Object.fromEntries([...params].map(([name, values]) => [name, values[0]!]));
  if (JSON.stringify(stored).length > MAX_PUSHED_BYTES) throw new InvalidRequest('the request is too large');
  const reference = randomToken();
  await deps.store.pushRequest(
    pushedRequestId(reference),
    { clientId: client.clientId, params: stored },
    now + PUSHED_REQUEST_TTL,
  );
  return { request_uri: `${PUSHED_REQUEST_URI_PREFIX}${reference}`, expires_in: PUSHED_REQUEST_TTL };
}

/** The request object's parameters; its errors answered here (invalid_request_object), not shown. */
async function requestObject(deps: ParDeps, client: Client, params: Params, now: number): Promise<Params> {
  try {
    return await deps.requestObjects!.resolve(client, params, now);
  } catch (err) {
    if (!(err instanceof UntrustedRedirectError)) throw err;
    throw new InvalidRequestObject(err.message, err.detail);
  }
}

/** The redirect URI, registered for the client that authenticated; its errors answered here, not shown. */
async function redirectUriOf(deps: ParDeps, client: Client, params: Params) {
  try {
    return await clientAndRedirectUri(deps.store, params);
  } catch (err) {
    if (!(err instanceof UntrustedRedirectError)) throw err;
    throw new InvalidRequest(err.message, err.detail ?? `client ${client.clientId}`);
  }
}
