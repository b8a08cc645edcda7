// Client authentication with a JWT (RFC 7523 §2.2 and §3, OIDC Core §9): private_key_jwt, signed with
// the client's private key (its public keys: ./keys.ts), and client_secret_jwt, an HMAC keyed with its
// client secret (which the server keeps encrypted for it, since a hash cannot check an HMAC). The
// assertion's iss and sub are the client_id, its aud names this server (the issuer, the token
// endpoint, or the endpoint it is sent to, as node-oidc-provider accepts), it expires soon, and its
// jti is used once across every instance (the store). Every failure is invalid_client, counted by
// the throttle as a wrong secret is.
import { errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { InvalidClient } from '../../errors/index.ts';
import type { Client } from '../../store/clients.ts';
import { MAX_JTI, type OneTimeStore } from '../../store/one-time.ts';
import { CLOCK_TOLERANCE } from '../../tokens/jwt.ts';
import { decryptAtRest, encryptAtRest } from '../../tokens/at-rest.ts';
import { hashToken } from '../../tokens/opaque.ts';
import type { Secrets } from '../../tokens/secrets.ts';
import { type ClientKeySets, ClientKeysUnavailable } from './keys.ts';

/** RFC 7523 §2.2: the client_assertion_type of a JWT. */
export const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** token_endpoint_auth_signing_alg_values_supported: asymmetric for private_key_jwt, HMAC for client_secret_jwt. */
export const PRIVATE_KEY_JWT_ALGS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];
export const CLIENT_SECRET_JWT_ALGS = ['HS256', 'HS384', 'HS512'];
/** The furthest an assertion's exp may lie ahead, seconds: a short-lived credential (RFC 7523 §3 item 4). */
export const MAX_ASSERTION_LIFETIME = 600;

export interface ClientAssertionOptions {
  issuer: string;
  store: OneTimeStore;
  /** TESSERA_SECRET, which opens client_secret_jwt clients' secrets. */
  secrets: Secrets;
  /** The clients' public keys, shared with the request objects' checks (../authorize/request-object.ts). */
  keys: ClientKeySets;
}

/** A client_secret_jwt client's secret as stored: encrypted under TESSERA_SECRET. */
export function sealJwtSecret(clientSecret: string, secrets: Secrets): string {
  return encryptAtRest(secrets, 'clientSecret', clientSecret);
}

/** What checks assertions, and where they are presented (the endpoint's URL, an `aud` accepted beside the issuer). */
export interface AssertionCheck {
  assertions: ClientAssertions;
  endpoint: string;
}

export class ClientAssertions {
  readonly #options: ClientAssertionOptions;
  readonly #keys: ClientKeySets;
  readonly #audiences: string[];

  constructor(options: ClientAssertionOptions) {
    this.#options = options;
    this.#keys = options.keys;
    this.#audiences = [options.issuer, `${options.issuer}/oauth2/token`];
  }

  /** Checks `assertion` as `client`'s, presented at `endpoint` (its URL); throws InvalidClient. */
  async verify(client: Client, assertion: string, now: number, endpoint?: string): Promise<void> {
    const clientId = client.clientId;
    const fail = (detail: string) => new InvalidClient('client authentication failed', `client ${clientId}: ${detail}`);
    const audience = endpoint && !this.#audiences.includes(endpoint) ? [...this.#audiences, endpoint] : this.#audiences;
    const options = {
      issuer: clientId,
      subject: clientId,
      audience,
      requiredClaims: ['exp', 'jti'],
      clockTolerance: CLOCK_TOLERANCE,
      currentDate: new Date(now * 1000),
    };
    let payload;
    try {
      if (client.tokenEndpointAuthMethod === 'client_secret_jwt') {
        const key = Buffer.from(this.#secret(client), 'utf8');
        ({ payload } = await jwtVerify(assertion, key, { ...options, algorithms: CLIENT_SECRET_JWT_ALGS }));
      } else {
        const verifyWith = (keys: JWTVerifyGetKey) =>
          jwtVerify(assertion, keys, { ...options, algorithms: PRIVATE_KEY_JWT_ALGS });
        ({ payload } = await this.#keys.withKeys(client, now, verifyWith));
      }
    } catch (err) {
      if (err instanceof InvalidClient) throw err;
      if (err instanceof ClientKeysUnavailable) throw fail(err.message);
      if (err instanceof errors.JOSEError) throw fail(`assertion refused: ${err.code}: ${err.message}`);
      throw fail(`assertion refused: ${(err as Error).message}`);
    }
    const exp = payload.exp!;
    if (exp > now + MAX_ASSERTION_LIFETIME) throw fail(`assertion expires too far ahead (exp ${exp})`);
    const jti = payload.jti!;
    if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI)
      throw fail('assertion jti is not a short string');
    // RFC 7523 §3 item 7: one use, kept until the assertion would be refused as expired anyway.
    const id = hashToken(`client-assertion\n${clientId}\n${jti}`);
    if (!(await this.#options.store.useOnce(id, exp + CLOCK_TOLERANCE))) {
      throw fail(`assertion jti ${JSON.stringify(jti)} was used before`);
    }
  }

  #secret(client: Client): string {
    const sealed = client.secretEncrypted;
    const opened = sealed ? decryptAtRest(this.#options.secrets, 'clientSecret', sealed) : undefined;
    if (!opened) {
      throw new InvalidClient('client authentication failed', `client ${client.clientId}: its secret cannot be opened`);
    }
    return opened.plaintext;
  }
}
