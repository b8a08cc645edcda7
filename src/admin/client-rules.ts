// The rules a client registered by the operator must meet (`tessera clients create|update`, the
// admin API): its grant types, scopes, redirect URIs, origins, logout URIs and exchange audiences. A broken
// rule is an AdminError naming the CLI's option, the API's field being the same name in snake_case.
import type { Config } from '../config/index.ts';
import type { LogoutChannel, LogoutUri } from '../store/clients.ts';
import { logoutUriProblem, redirectUriProblem } from '../oauth/registration/redirect-rules.ts';
import { DEVICE_CODE_GRANT, JWT_BEARER_GRANT, PERSON_GRANT_TYPES, TOKEN_EXCHANGE } from '../oauth/grant-types.ts';
import { resourceUriProblem } from '../oauth/resources.ts';
import { ClientKeysError } from './client-keys.ts';
import { AdminError } from './errors.ts';

/**
 * A backchannel_logout_uri or frontchannel_logout_uri: https, or plain http where redirect URIs may be
 * (and on loopback), as a redirect URI is checked.
 */
export function checkLogout(logout: LogoutUri, allowHttp: boolean, channel: LogoutChannel): LogoutUri {
  const { uri } = logout;
  const problem = logoutUriProblem(uri);
  const plainHttp = uri.startsWith('http:') && logoutUriProblem(uri.replace(/^http:/, 'https:')) === undefined;
  if (problem && !(allowHttp && plainHttp)) throw new AdminError(`--${channel}-logout-uri: "${uri}" ${problem}`);
  return logout;
}

/** `--exchange-audience`: absolute URIs (an API's resource identifier, or the default audience), each once. */
export function checkExchangeAudiences(audiences: string[]): string[] {
  for (const audience of audiences) {
    const problem = resourceUriProblem(audience);
    if (problem) throw new AdminError(`--exchange-audience: "${audience}" ${problem}`);
  }
  return [...new Set(audiences)];
}

/** An origin as a browser sends it: http(s)://host[:port], nothing after. */
export function checkOrigin(origin: string): string {
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.origin !== origin) {
    throw new AdminError(`--allowed-origin: "${origin}" is not an origin (https://app.example.com, no path)`);
  }
  return origin;
}

/** A client's grant types: known names, refresh with a person's grant, no client_credentials for a public client. */
export function checkGrantTypes(grantTypes: string[], isPublic: boolean): string[] {
  const unique = [...new Set(grantTypes)];
  const unknownGrant = unique.filter((g) => !GRANT_TYPES.includes(g));
  if (unknownGrant.length > 0 || unique.length === 0) {
    throw new AdminError(`--grant-types: a comma-separated list of ${GRANT_TYPES.join(', ')}`);
  }
  if (unique.includes('refresh_token') && !unique.some((g) => PERSON_GRANT_TYPES.includes(g))) {
    throw new AdminError(`--grant-types: refresh_token comes with ${PERSON_GRANT_TYPES.join(' or ')}`);
  }
  // RFC 6749 §4.4: client_credentials is for confidential clients only.
  if (isPublic && unique.includes('client_credentials')) {
    throw new AdminError('--grant-types: a --public client cannot use client_credentials');
  }
  return unique;
}

export const GRANT_TYPES = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
  DEVICE_CODE_GRANT,
  TOKEN_EXCHANGE,
  JWT_BEARER_GRANT,
];

/** At least one scope, each one Tessera knows. */
export function checkScopes(scopes: readonly string[], config: Pick<Config, 'scopes'>): void {
  if (scopes.length === 0) throw new AdminError('--scope must name at least one scope');
  const unknown = scopes.filter((s) => !config.scopes.has(s));
  if (unknown.length > 0)
    throw new AdminError(`unknown scope: ${unknown.join(' ')} (known: ${[...config.scopes.keys()].join(' ')})`);
}

/**
 * The one set of redirect URI rules (src/oauth/registration/redirect-rules.ts, as for clients that
 * register themselves); plain http to a host other than loopback only with `allowHttp`
 * (TESSERA_ALLOW_HTTP_REDIRECT_URIS, never in production). What deserves a warning, or undefined.
 */
export function checkRedirectUri(uri: string, option: string, allowHttp: boolean): string | undefined {
  const problem = redirectUriProblem(uri);
  const url = URL.parse(uri);
  const plainHttp = url?.protocol === 'http:' && redirectUriProblem(uri.replace(/^http:/, 'https:')) === undefined;
  if (problem && !(allowHttp && plainHttp)) throw new AdminError(`${option}: "${uri}" ${problem}`);
  if (url?.protocol === 'http:' && url.hostname === 'localhost') {
    return (
      `${option}: "${uri}": localhost may resolve to another address than the app listens on; ` +
      'http://127.0.0.1 is what RFC 8252 §8.3 recommends'
    );
  }
  return plainHttp && problem ? `${option}: "${uri}" is plain http (TESSERA_ALLOW_HTTP_REDIRECT_URIS)` : undefined;
}

/** A ClientKeysError (./client-keys.ts) as an AdminError. */
export function usage<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof ClientKeysError) throw new AdminError(err.message);
    throw err;
  }
}

export function sealed(seal: ((secret: string) => string) | undefined, secret: string): string {
  if (!seal) throw new TypeError('client_secret_jwt: the secret cannot be kept without TESSERA_SECRET');
  return seal(secret);
}
