// Client authentication at the token endpoint (RFC 6749 §2.3): client_secret_basic,
// client_secret_post, a JWT (private_key_jwt and client_secret_jwt, RFC 7523 §2.2: ./assertion.ts),
// or none (public clients, which prove possession with PKCE instead).
import { decodeJwt } from 'jose';
import { InvalidClient, InvalidRequest, TooManyAttempts } from '../../errors/index.ts';
import type { Client, ClientStore } from '../../store/clients.ts';
import { hashToken, safeEqual } from '../../tokens/opaque.ts';
import { type Params, single } from '../params.ts';
import type { Refusal } from '../../authn/throttle.ts';
import type { ClientAuthGuard } from './throttle.ts';
import { type AssertionCheck, JWT_BEARER } from './assertion.ts';

/** What the request presents: the client it names, how it authenticates, and its secret or assertion. */
interface Presented {
  clientId: string;
  /** 'jwt': an assertion, for a client registered for private_key_jwt or client_secret_jwt. */
  method: Client['tokenEndpointAuthMethod'] | 'jwt';
  secret?: string;
  assertion?: string;
}

/** RFC 7523 §2.2: client_assertion_type and client_assertion, the client named by the body or the assertion's sub. */
function presentedAssertion(body: Params, authorization: string | undefined): Presented {
  if (authorization !== undefined && /^Basic /i.test(authorization)) {
    throw new InvalidRequest('client authentication must use only one method');
  }
  if (single(body, 'client_secret') !== undefined) {
    throw new InvalidRequest('client authentication must use only one method');
  }
  const type = single(body, 'client_assertion_type');
  if (type !== JWT_BEARER) throw new InvalidRequest(`client_assertion_type must be ${JWT_BEARER}`);
  const assertion = single(body, 'client_assertion');
  if (assertion === undefined) throw new InvalidRequest('client_assertion is missing');
  let sub: unknown;
  try {
    sub = decodeJwt(assertion).sub;
  } catch {
    throw new InvalidClient('client_assertion is not a JWT');
  }
  const bodyClientId = single(body, 'client_id');
  const clientId = bodyClientId ?? sub;
  if (typeof clientId !== 'string' || clientId === '') throw new InvalidClient('client_assertion names no client');
  return { clientId, method: 'jwt', assertion };
}

/** RFC 6749 §2.3.1: the id and secret are form-urlencoded before they are joined and Base64-encoded. */
function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

export function parseBasicCredentials(header: string): { clientId: string; clientSecret: string } {
  const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  if (!match) throw new InvalidClient('malformed HTTP Basic credentials');
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) throw new InvalidClient('malformed HTTP Basic credentials');
  try {
    return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    throw new InvalidClient('malformed HTTP Basic credentials');
  }
}

/**
 * The client the request authenticates as. With a `guard`, a client_id or address that failed too
 * often is refused (429, before the secret is compared) and a failure is counted (./throttle.ts).
 */
export async function authenticateClient(
  store: ClientStore,
  authorization: string | undefined,
  body: Params,
  guard?: ClientAuthGuard,
): Promise<Client> {
  const bodyClientId = single(body, 'client_id');
  const bodySecret = single(body, 'client_secret');
  let presented: Presented;
  if (authorization !== undefined && /^Basic /i.test(authorization) && !body.has('client_assertion')) {
    // RFC 6749 §2.3: "The client MUST NOT use more than one authentication method in each request."
    if (bodySecret !== undefined) throw new InvalidRequest('client authentication must use only one method');
    const credentials = parseBasicCredentials(authorization);
    if (bodyClientId !== undefined && bodyClientId !== credentials.clientId) {
      throw new InvalidRequest('client_id in the body does not match the authenticated client');
    }
    presented = { clientId: credentials.clientId, method: 'client_secret_basic', secret: credentials.clientSecret };
  } else if (body.has('client_assertion') || body.has('client_assertion_type')) {
    presented = presentedAssertion(body, authorization);
  } else if (bodySecret !== undefined) {
    if (bodyClientId === undefined) throw new InvalidClient('client_secret was sent without client_id');
    presented = { clientId: bodyClientId, method: 'client_secret_post', secret: bodySecret };
  } else if (bodyClientId !== undefined) {
    presented = { clientId: bodyClientId, method: 'none' };
  } else {
    throw new InvalidClient('client authentication is required');
  }

  const { clientId } = presented;
  if (!guard) return verify(store, presented, Math.floor(Date.now() / 1000));
  const { throttle, ip, now } = guard;
  const check = throttle.check(clientId, ip, now);
  if (check.kind === 'refused') throw tooMany(check.refusal);
  if (check.kind === 'clean') {
    // The hot path (a pair known here): nothing read or written for throttling unless the secret is wrong.
    try {
      return await verify(store, presented, now, guard.assertion);
    } catch (err) {
      if (err instanceof InvalidClient)
        await throttle.failed(throttle.keys(clientId, await known(store, clientId), ip), now);
      throw err;
    }
  }
  // Not known here, or a key of it failing: admitted first, compared after.
  const attempt = await throttle.begin(throttle.keys(clientId, await known(store, clientId), ip), now);
  if (attempt.refused) throw tooMany(attempt.refused);
  try {
    const client = await verify(store, presented, now, guard.assertion);
    await attempt.succeeded();
    return client;
  } catch (err) {
    if (err instanceof InvalidClient) await attempt.failed();
    throw err;
  }
}

function tooMany(refusal: Refusal): TooManyAttempts {
  const wait = `try again in ${refusal.retryAfter} s`;
  return new TooManyAttempts(`too many failed authentications of this client or from this address; ${wait}`, refusal);
}

/** The client named, if it exists (to tell a public client, whose id is not counted). */
async function known(store: ClientStore, clientId: string): Promise<Client | undefined> {
  return store.getClient(clientId).catch(() => undefined);
}

async function verify(store: ClientStore, presented: Presented, now: number, check?: AssertionCheck): Promise<Client> {
  const { clientId, method, secret } = presented;
  const client = await store.getClient(clientId);
  if (!client) throw new InvalidClient('client authentication failed', `no client ${JSON.stringify(clientId)}`);
  // Whatever failed, the client hears the same (an unknown id must not read differently from a known
  // one without its secret); the operator's detail says which.
  const registered = client.tokenEndpointAuthMethod;
  const jwt = registered === 'private_key_jwt' || registered === 'client_secret_jwt';
  if (method === 'jwt' ? !jwt : registered !== method) {
    const sent = method === 'jwt' ? 'a client assertion' : method;
    throw new InvalidClient(
      'client authentication failed',
      `client ${clientId} is registered for ${registered}, sent ${sent}`,
    );
  }
  if (method === 'jwt') {
    if (!check) throw new InvalidClient('client authentication failed', 'client assertions are not accepted here');
    await check.assertions.verify(client, presented.assertion!, now, check.endpoint);
    return client;
  }
  if (method !== 'none') {
    const presentedHash = hashToken(secret!);
    const current = client.secretHash !== null && safeEqual(presentedHash, client.secretHash);
    // The secret before a rotation, during its grace period (`tessera clients rotate-secret --grace`).
    const previous = client.previousSecret ?? null;
    const during = !current && previous !== null && previous.expiresAt > now && safeEqual(presentedHash, previous.hash);
    if (!current && !during) {
      throw new InvalidClient('client authentication failed', `client ${clientId}: wrong client_secret`);
    }
  }
  return client;
}
