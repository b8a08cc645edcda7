// Upstream providers as the sign-in steps see them, whichever kind: where to send the person (the
// authorization request, with what the callback must then check) and who came back (the callback
// verified). OpenID Connect is ./oidc.ts, GitHub ./github.ts; every request goes through ./fetch.ts.
import { calculatePKCECodeChallenge, randomNonce, randomPKCECodeVerifier, randomState } from 'openid-client';
import type { UpstreamProvider } from '../store/upstream.ts';
import { asUpstreamError, UpstreamError } from './errors.ts';
import { type UpstreamNetwork, withinDeadline } from './fetch.ts';
import { githubAuthorizationUrl, githubCallback } from './github.ts';
import type { UpstreamIdentity } from './identity.ts';
import { type AuthorizationHints, type OidcConfigurations, oidcAuthorizationUrl, oidcCallback } from './oidc.ts';
import type { Secrets } from '../tokens/secrets.ts';
import { openClientSecret } from './secrets.ts';

export interface UpstreamDeps {
  /** Tessera's issuer: the callback URIs are under it. */
  issuer: string;
  /** TESSERA_SECRET (and the previous ones), which the client secrets are encrypted under. */
  secret: Secrets;
  network: UpstreamNetwork;
  oidc: OidcConfigurations;
}

/** What the callback must check: kept in the browser encrypted (the flow's cookie) until it returns. */
export interface CallbackChecks {
  state: string;
  /** OpenID Connect's nonce; null for GitHub. */
  nonce: string | null;
  /** The PKCE code_verifier (RFC 7636 §4.1). */
  verifier: string;
  /** The max_age asked of the provider, whose auth_time is then checked; null when none. */
  maxAge: number | null;
}

/** The redirect (callback) URI to register at the provider: stable, under the issuer, one per provider. */
export function callbackUri(issuer: string, providerId: string): string {
  return `${issuer}/login/upstream/${providerId}/callback`;
}

/**
 * The provider's client secret, decrypted: a TESSERA_SECRET other than the one it was stored under
 * is the operator's to fix.
 */
function clientSecretOf(deps: UpstreamDeps, provider: UpstreamProvider): string {
  try {
    return openClientSecret(provider.clientSecretEnc, deps.secret);
  } catch (err) {
    throw new UpstreamError('misconfigured', (err as Error).message, { cause: err });
  }
}

/** Counts a failed step for the metrics, then throws it as an UpstreamError (./errors.ts). */
function failed(deps: UpstreamDeps, provider: UpstreamProvider, err: unknown): never {
  const error = asUpstreamError(err);
  deps.network.observer?.failed(provider.id, error.reason);
  throw error;
}

/** Where to send the person, and what the callback will check. Throws UpstreamError. */
export async function authorizationAt(
  deps: UpstreamDeps,
  provider: UpstreamProvider,
  hints: AuthorizationHints,
): Promise<{ url: URL; checks: CallbackChecks }> {
  try {
    const verifier = randomPKCECodeVerifier();
    const codeChallenge = await calculatePKCECodeChallenge(verifier);
    const state = randomState();
    const redirectUri = callbackUri(deps.issuer, provider.id);
    if (provider.type === 'github') {
      const url = githubAuthorizationUrl(provider, { redirectUri, state, codeChallenge, loginHint: hints.loginHint });
      return { url, checks: { state, nonce: null, verifier, maxAge: null } };
    }
    const nonce = randomNonce();
    const clientSecret = clientSecretOf(deps, provider);
    const config = await withinDeadline(provider, deps.network, () =>
      deps.oidc.get(provider, clientSecret, deps.network.allowPrivate),
    );
    const url = oidcAuthorizationUrl(config, provider, { redirectUri, state, nonce, codeChallenge, hints });
    return { url, checks: { state, nonce, verifier, maxAge: hints.maxAge } };
  } catch (err) {
    failed(deps, provider, err);
  }
}

/**
 * The person the provider sent back, its answer (the callback's query) verified against `checks`;
 * `profile` completes the identity (email, names) when a first sign-in needs it. Throws UpstreamError.
 */
export async function identityAt(
  deps: UpstreamDeps,
  provider: UpstreamProvider,
  query: URLSearchParams,
  checks: CallbackChecks,
): Promise<{ identity: UpstreamIdentity; profile: () => Promise<UpstreamIdentity> }> {
  const redirectUri = callbackUri(deps.issuer, provider.id);
  // One deadline for the whole callback: the token, the keys, and the userinfo a first sign-in reads.
  const deadline = performance.now() + deps.network.timeoutMs;
  const guarded = <T>(work: () => Promise<T>) =>
    withinDeadline(provider, deps.network, work, deadline).catch((err: unknown) => failed(deps, provider, err));
  return guarded(async () => {
    const clientSecret = clientSecretOf(deps, provider);
    const verified =
      provider.type === 'github'
        ? await githubCallback(provider, clientSecret, query, { ...checks, redirectUri })
        : await oidcCallback(
            await deps.oidc.get(provider, clientSecret, deps.network.allowPrivate),
            new URL(`${redirectUri}?${query}`),
            { ...checks, nonce: checks.nonce ?? '' },
          );
    return { identity: verified.identity, profile: () => guarded(verified.profile) };
  });
}

/**
 * The provider's jwks_uri, from its discovery document (read through the guard and kept as a
 * sign-in's is), for the ID-JAGs it issues (src/oauth/grants/jwt-bearer.ts). Throws UpstreamError.
 */
export async function jwksUriOf(deps: UpstreamDeps, provider: UpstreamProvider): Promise<string> {
  try {
    const clientSecret = clientSecretOf(deps, provider);
    const config = await withinDeadline(provider, deps.network, () =>
      deps.oidc.get(provider, clientSecret, deps.network.allowPrivate),
    );
    const uri = config.serverMetadata().jwks_uri;
    if (!uri) throw new UpstreamError('invalid_response', `${provider.issuer} names no jwks_uri`);
    return uri;
  } catch (err) {
    failed(deps, provider, err);
  }
}
