// How a client authenticates, as `tessera clients create|update` set it: a secret (client_secret_basic,
// client_secret_post, client_secret_jwt) or a key (private_key_jwt, its public keys given as a JWK Set
// or a jwks_uri), checked here; src/oauth/client-auth verifies what the client then presents.
import type { Client, ClientJwks, TokenEndpointAuthMethod } from '../store/clients.ts';
import { jwksProblem } from '../oauth/client-auth/keys.ts';
import { REQUEST_OBJECT_ALGS } from '../oauth/authorize/request-object.ts';

export type ConfidentialAuthMethod = Exclude<TokenEndpointAuthMethod, 'none'>;
export const CONFIDENTIAL_AUTH_METHODS: readonly ConfidentialAuthMethod[] = [
  'client_secret_basic',
  'client_secret_post',
  'client_secret_jwt',
  'private_key_jwt',
];

export class ClientKeysError extends Error {}

/** `--auth-method`: one of CONFIDENTIAL_AUTH_METHODS. */
export function authMethodOption(value: string | undefined): ConfidentialAuthMethod | undefined {
  if (value === undefined) return undefined;
  if (!(CONFIDENTIAL_AUTH_METHODS as readonly string[]).includes(value)) {
    throw new ClientKeysError(`--auth-method must be one of ${CONFIDENTIAL_AUTH_METHODS.join(', ')}`);
  }
  return value as ConfidentialAuthMethod;
}

/** `--jwks` (a JWK Set of public keys, as JSON) or `--jwks-uri` (https; http too with `allowHttp`). */
export function clientKeysOption(
  jwks: string | undefined,
  jwksUri: string | undefined,
  allowHttp: boolean,
): Pick<Client, 'jwks' | 'jwksUri'> | undefined {
  if (jwks === undefined && jwksUri === undefined) return undefined;
  if (jwks !== undefined && jwksUri !== undefined) throw new ClientKeysError('give --jwks or --jwks-uri, not both');
  if (jwks !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(jwks);
    } catch {
      throw new ClientKeysError('--jwks must be a JWK Set in JSON: {"keys": [...]}');
    }
    const problem = jwksProblem(parsed);
    if (problem) throw new ClientKeysError(`--jwks ${problem}`);
    return { jwks: parsed as ClientJwks, jwksUri: null };
  }
  const url = URL.parse(jwksUri!);
  const scheme = url?.protocol === 'https:' || (allowHttp && url?.protocol === 'http:');
  if (!url || !scheme || url.username !== '' || url.password !== '' || url.hash !== '') {
    throw new ClientKeysError('--jwks-uri must be an https URL without credentials or fragment');
  }
  return { jwks: null, jwksUri: url.href };
}

/** A client registered for private_key_jwt needs its public keys. */
export function checkKeysFor(method: TokenEndpointAuthMethod, client: Pick<Client, 'jwks' | 'jwksUri'>): void {
  if (method === 'private_key_jwt' && !client.jwks && !client.jwksUri) {
    throw new ClientKeysError('private_key_jwt needs the public keys: --jwks JWKS or --jwks-uri URL');
  }
}

/**
 * `--request-object-signing-alg`: the one alg its request objects must use (`none`: unsigned ones
 * accepted), or `any` for any asymmetric one (null). Undefined when not given.
 */
export function requestObjectAlgOption(value: string | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'any') return null;
  if (!REQUEST_OBJECT_ALGS.includes(value)) {
    throw new ClientKeysError(`--request-object-signing-alg must be any or one of ${REQUEST_OBJECT_ALGS.join(', ')}`);
  }
  return value;
}
