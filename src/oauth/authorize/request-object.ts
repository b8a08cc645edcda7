// Request objects by value (RFC 9101, OIDC Core §6.1): the `request` parameter, a JWT of the
// authorization request's parameters, signed with the client's key (its jwks or jwks_uri,
// ../client-auth/keys.ts). Unsigned (`alg: none`) only for a client registered so
// (`--request-object-signing-alg none`); a client registered for an alg must use it. Its client_id
// must be the request's; `iss` must be the client_id and `aud` name this server when present; `exp`
// and `nbf` are kept when present. Its parameters replace the query's (OIDC Core §6.3.3: "the
// values in the Request Object take precedence"). Checked at the authorization endpoint and at the
// pushed authorization request endpoint; what fails is invalid_request_object, shown on the error page
// (the redirect URI the object names is not trusted yet).
import { decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey, UnsecuredJWT } from 'jose';
import { UntrustedRedirectError } from '../../errors/index.ts';
import type { Client } from '../../store/clients.ts';
import { PRIVATE_KEY_JWT_ALGS } from '../client-auth/assertion.ts';
import { type ClientKeySets, ClientKeysUnavailable } from '../client-auth/keys.ts';
import { type Params, single } from '../params.ts';
import { CLOCK_TOLERANCE } from '../../tokens/jwt.ts';

/** request_object_signing_alg_values_supported. */
export const REQUEST_OBJECT_ALGS = [...PRIVATE_KEY_JWT_ALGS, 'none'];
/** The JWT's own claims, not parameters of the request. */
const JWT_CLAIMS = new Set(['iss', 'aud', 'exp', 'iat', 'nbf', 'jti', 'sub', 'request', 'request_uri']);
const MAX_LENGTH = 16 * 1024;

export class RequestObjects {
  readonly #issuer: string;
  readonly #keys: ClientKeySets;

  constructor(issuer: string, keys: ClientKeySets) {
    this.#issuer = issuer;
    this.#keys = keys;
  }

  /** The request's parameters with the request object's in place of the query's; throws the error to show. */
  async resolve(client: Client, params: Params, now: number): Promise<Params> {
    const fail = (description: string, detail?: string) =>
      new UntrustedRedirectError(
        'invalid_request_object',
        description,
        `client ${client.clientId}: ${detail ?? description}`,
      );
    if ((params.get('request')?.length ?? 0) > 1) throw fail('request is included more than once');
    const jwt = single(params, 'request')!;
    if (jwt.length > MAX_LENGTH) throw fail('the request object is too large');
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(jwt).alg;
    } catch {
      throw fail('the request object is not a JWT');
    }
    const registered = client.requestObjectSigningAlg ?? null;
    if (alg === 'none' ? registered !== 'none' : registered !== null && registered !== alg) {
      throw fail('the request object is not signed as the client is registered to sign it', `alg ${alg}`);
    }
    let payload: JWTPayload;
    try {
      payload = await this.#verify(client, jwt, alg, now);
    } catch (err) {
      if (err instanceof ClientKeysUnavailable)
        throw fail('the client has no keys to verify its request object', err.message);
      const reason = err instanceof errors.JOSEError ? `${err.code}: ${err.message}` : (err as Error).message;
      throw fail('the request object could not be verified', reason);
    }
    // RFC 9101 §5: its client_id, if any, must be the request's; iss, if any, the client.
    if (payload.client_id !== undefined && payload.client_id !== client.clientId) {
      throw fail('the request object names another client_id');
    }
    if (payload.iss !== undefined && payload.iss !== client.clientId)
      throw fail('the request object iss is not the client');
    const merged = new Map(params);
    merged.delete('request');
    for (const [name, value] of Object.entries(payload)) {
      if (JWT_CLAIMS.has(name) || value === null || value === undefined) continue;
      merged.set(name, [
        typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value),
      ]);
    }
    merged.set('client_id', [client.clientId]);
    return merged;
  }

  async #verify(client: Client, jwt: string, alg: string | undefined, now: number): Promise<JWTPayload> {
    const options = { clockTolerance: CLOCK_TOLERANCE, currentDate: new Date(now * 1000) };
    // RFC 9101 §6.2: aud, when present, names this server.
    const audience = (payload: JWTPayload) => {
      const aud = payload.aud === undefined ? [] : Array.isArray(payload.aud) ? payload.aud : [payload.aud];
      if (payload.aud !== undefined && !aud.includes(this.#issuer)) throw new Error('aud does not name this server');
      return payload;
    };
    if (alg === 'none') return audience(UnsecuredJWT.decode(jwt, options).payload);
    const verify = (keys: JWTVerifyGetKey) => jwtVerify(jwt, keys, { ...options, algorithms: PRIVATE_KEY_JWT_ALGS });
    return audience((await this.#keys.withKeys(client, now, verify)).payload);
  }
}
