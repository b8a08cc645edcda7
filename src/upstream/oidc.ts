// An OpenID Connect provider, spoken to with openid-client: configured from its discovery document
// (OIDC Discovery 1.0, kept for an hour per instance), the authorization code flow with PKCE (RFC
// 7636, S256), `state` and `nonce`, and the ID token validated: issuer, audience, expiry, nonce,
// auth_time when max_age was asked (OIDC Core §3.1.3.7), and its signature through the provider's
// JWKS. openid-client checks the signature of an ID token from the token endpoint only when asked
// (it trusts TLS to have authenticated the endpoint); enableNonRepudiationChecks asks, so a token
// altered on the way, or signed with a key the provider does not publish, is refused. RFC 9207's
// `iss` in the authorization response is checked when the provider advertises it (mix-up defence).
import * as client from 'openid-client';
import type { UpstreamProvider } from '../store/upstream.ts';
import { upstreamFetch } from './fetch.ts';
import { identityFromClaims, type UpstreamIdentity } from './identity.ts';

/** How long a discovered configuration is used before the document is read again. */
const DISCOVERY_TTL_MS = 60 * 60 * 1000;

export interface AuthorizationHints {
  /** OIDC Core §3.1.2.1: the person must sign in again at the provider (our request had prompt=login). */
  forceLogin: boolean;
  /** Seconds: the provider's sign-in no older than this (our request's max_age), or null. */
  maxAge: number | null;
  loginHint: string | null;
}

export interface CallbackChecks {
  state: string;
  nonce: string;
  verifier: string;
  maxAge: number | null;
}

/** Discovered configurations per provider, each for the provider as it was configured (its updatedAt). */
export class OidcConfigurations {
  readonly #cache = new Map<string, { version: string; config: client.Configuration; until: number }>();

  /** The provider's configuration, discovered now unless known; within the step's deadline (./fetch.ts). */
  async get(provider: UpstreamProvider, clientSecret: string, allowHttp: boolean): Promise<client.Configuration> {
    const version = `${provider.issuer}\n${provider.clientId}\n${provider.updatedAt}\n${allowHttp}`;
    const cached = this.#cache.get(provider.id);
    if (cached && cached.version === version && cached.until > Date.now()) return cached.config;
    const options = {
      [client.customFetch]: upstreamFetch,
      execute: [client.enableNonRepudiationChecks, ...(allowHttp ? [client.allowInsecureRequests] : [])],
    };
    const issuer = new URL(provider.issuer!);
    const metadata = { client_secret: clientSecret };
    let config = await client.discovery(
      issuer,
      provider.clientId,
      metadata,
      client.ClientSecretBasic(clientSecret),
      options,
    );
    // client_secret_basic (RFC 6749 §2.3.1) unless the provider supports only client_secret_post (RFC 8414 §2).
    const methods = config.serverMetadata().token_endpoint_auth_methods_supported;
    if (methods && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')) {
      config = new client.Configuration(config.serverMetadata(), provider.clientId, metadata);
      config[client.customFetch] = upstreamFetch;
      for (const extension of options.execute) extension(config);
    }
    this.#cache.set(provider.id, { version, config, until: Date.now() + DISCOVERY_TTL_MS });
    return config;
  }

  /** Forgets a provider's configuration (after a failure that a fresh document may cure). */
  forget(providerId: string): void {
    this.#cache.delete(providerId);
  }
}

/** The authorization request's URL at the provider (OIDC Core §3.1.2.1). */
export function oidcAuthorizationUrl(
  config: client.Configuration,
  provider: UpstreamProvider,
  request: { redirectUri: string; state: string; nonce: string; codeChallenge: string; hints: AuthorizationHints },
): URL {
  const { hints } = request;
  return client.buildAuthorizationUrl(config, {
    redirect_uri: request.redirectUri,
    scope: provider.scopes.join(' '),
    state: request.state,
    nonce: request.nonce,
    code_challenge: request.codeChallenge,
    code_challenge_method: 'S256',
    ...(hints.forceLogin ? { prompt: 'login' } : {}),
    ...(hints.maxAge !== null ? { max_age: String(hints.maxAge) } : {}),
    ...(hints.loginHint ? { login_hint: hints.loginHint } : {}),
  });
}

/**
 * The callback: the code exchanged (with the PKCE verifier), the ID token checked as above, and the
 * person it names. `profile` fetches the userinfo for what the ID token does not say, when the
 * identity is needed beyond its subject (a first sign-in).
 */
export async function oidcCallback(
  config: client.Configuration,
  callbackUrl: URL,
  checks: CallbackChecks,
): Promise<{ identity: UpstreamIdentity; profile: () => Promise<UpstreamIdentity> }> {
  const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
    pkceCodeVerifier: checks.verifier,
    expectedState: checks.state,
    expectedNonce: checks.nonce,
    idTokenExpected: true,
    ...(checks.maxAge !== null ? { maxAge: checks.maxAge } : {}),
  });
  const claims = tokens.claims()!;
  const identity = identityFromClaims(claims.sub, claims);
  const profile = async () => {
    if (config.serverMetadata().userinfo_endpoint === undefined) return identity;
    const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    return identityFromClaims(claims.sub, claims, userinfo);
  };
  return { identity, profile };
}
