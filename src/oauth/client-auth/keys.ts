// A client's public keys (private_key_jwt assertions, request objects): its `jwks` as registered, or
// the JWK Set at its `jwks_uri`, fetched through the outbound guard (../../net/outbound.ts: https
// only, no private addresses unless TESSERA_OUTBOUND_ALLOW_PRIVATE, a deadline and a size limit),
// kept for a while, and fetched again when a JWT names a `kid` the copy lacks (a client that rotated
// its keys), at most once per REFETCH_AFTER, so that made-up kids do not make Tessera fetch each time.
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { fetchOutbound } from '../../net/outbound.ts';
import type { Client } from '../../store/clients.ts';

/** Seconds a fetched JWK Set is kept, and after which an unknown kid may fetch it again. */
export const JWKS_CACHE = { keep: 300, refetchAfter: 30 } as const;
const MAX_BYTES = 64 * 1024;
const TIMEOUT_MS = 5_000;
const MAX_ENTRIES = 1_000;

/** The client's keys could not be had: its fault, answered as a failed authentication. */
export class ClientKeysUnavailable extends Error {}

interface Entry {
  keys: JWTVerifyGetKey;
  fetchedAt: number;
}

export class ClientKeySets {
  readonly #allowPrivate: boolean;
  readonly #fetched = new Map<string, Entry>();
  readonly #inline = new WeakMap<object, JWTVerifyGetKey>();

  constructor(options: { allowPrivate: boolean }) {
    this.#allowPrivate = options.allowPrivate;
  }

  /**
   * Verifies with the client's keys: `verify` is called with them, and called again with a fresh
   * copy of the jwks_uri's when none of the cached keys matched.
   */
  async withKeys<T>(client: Client, now: number, verify: (keys: JWTVerifyGetKey) => Promise<T>): Promise<T> {
    if (client.jwks) {
      let keys = this.#inline.get(client.jwks);
      if (!keys) this.#inline.set(client.jwks, (keys = createLocalJWKSet(client.jwks as JSONWebKeySet)));
      return verify(keys);
    }
    const uri = client.jwksUri;
    if (!uri) throw new ClientKeysUnavailable('the client has no registered keys (jwks or jwks_uri)');
    return this.withKeysAt(uri, now, verify);
  }

  /**
   * Verifies with the JWK Set at `uri` (a client's jwks_uri, or an ID-JAG issuer's), kept and fetched
   * again as above; `allowPrivate` lets this one fetch reach a private address (a provider the
   * operator allowed inside the network).
   */
  async withKeysAt<T>(
    uri: string,
    now: number,
    verify: (keys: JWTVerifyGetKey) => Promise<T>,
    allowPrivate = this.#allowPrivate,
  ): Promise<T> {
    let entry = this.#fetched.get(uri);
    if (!entry || entry.fetchedAt + JWKS_CACHE.keep <= now) entry = await this.#fetch(uri, now, allowPrivate);
    try {
      return await verify(entry.keys);
    } catch (err) {
      const unknownKid = err instanceof errors.JWKSNoMatchingKey;
      if (!unknownKid || entry.fetchedAt + JWKS_CACHE.refetchAfter > now) throw err;
      return verify((await this.#fetch(uri, now, allowPrivate)).keys);
    }
  }

  async #fetch(uri: string, now: number, allowPrivate: boolean): Promise<Entry> {
    let body: unknown;
    try {
      const response = await fetchOutbound(uri, {
        timeoutMs: TIMEOUT_MS,
        maxBytes: MAX_BYTES,
        allowPrivate,
        allowHttp: this.#allowPrivate,
        headers: { accept: 'application/jwk-set+json, application/json' },
      });
      if (response.status !== 200) throw new Error(`status ${response.status}`);
      body = JSON.parse(response.body.toString('utf8'));
    } catch (err) {
      throw new ClientKeysUnavailable(`jwks_uri ${uri}: ${(err as Error).message}`, { cause: err });
    }
    let keys: JWTVerifyGetKey;
    try {
      keys = createLocalJWKSet(body as JSONWebKeySet);
    } catch {
      throw new ClientKeysUnavailable(`jwks_uri ${uri}: not a JWK Set`);
    }
    const entry = { keys, fetchedAt: now };
    if (this.#fetched.size >= MAX_ENTRIES) this.#fetched.clear();
    this.#fetched.set(uri, entry);
    return entry;
  }
}

/** A JWK Set a client registers: public keys only, each with a kty (RFC 7517 §5); the problem, or undefined. */
export function jwksProblem(jwks: unknown): string | undefined {
  if (typeof jwks !== 'object' || jwks === null || !Array.isArray((jwks as { keys?: unknown }).keys)) {
    return 'must be a JWK Set: {"keys": [...]}';
  }
  const keys = (jwks as { keys: unknown[] }).keys;
  if (keys.length === 0 || keys.length > 20) return 'must hold from 1 to 20 keys';
  for (const key of keys) {
    if (typeof key !== 'object' || key === null || typeof (key as { kty?: unknown }).kty !== 'string') {
      return 'has a key without a kty';
    }
    // A private key's parameters (RFC 7518 §6.2.2, §6.3.2; oct keys are secrets) must never be registered.
    if (['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'].some((member) => member in key)) return 'must hold public keys only';
  }
  try {
    createLocalJWKSet(jwks as JSONWebKeySet);
  } catch {
    return 'is not a valid JWK Set';
  }
  return undefined;
}
