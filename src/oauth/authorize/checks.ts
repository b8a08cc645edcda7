// The authorization request's checks (RFC 6749 §4.1.1, OIDC Core §3.1.2.1), one small function each,
// in the order ./index.ts runs them. The first decides whether errors may go back to the client;
// every other one throws an OAuthError that does.
import { isRegisteredRedirectUri } from '../redirect.ts';
import { ClientDocumentError } from '../registration/documents.ts';
import { UNSAFE_URI_CHARACTERS } from '../../net/uri-characters.ts';
import { InvalidRequest, InvalidScope, RequestNotSupported, RequestUriNotSupported } from '../../errors/index.ts';
import { UnauthorizedClient, UnsupportedResponseType, UntrustedRedirectError } from '../../errors/index.ts';
import type { Client, ClientStore } from '../../store/clients.ts';
import { type Params, required, single } from '../params.ts';
import { isWellFormedPkceValue } from '../pkce.ts';
import { checkAdminClient, checkAllowedScopes, parseScope } from '../scopes.ts';

const PROMPTS = ['none', 'login', 'consent', 'select_account'];
/** OIDC Core §3.1.2.1: the display values defined; Tessera's pages are the same for each. */
const DISPLAYS = ['page', 'popup', 'touch', 'wap'];

/** RFC 6749 §3.1.2.3: the client must be known and the redirect URI registered, exactly. */
export async function clientAndRedirectUri(store: ClientStore, params: Params) {
  const client = await requestingClient(store, params);
  if ((params.get('redirect_uri')?.length ?? 0) > 1)
    throw new UntrustedRedirectError('invalid_request', 'redirect_uri is included more than once');
  const redirectUri = single(params, 'redirect_uri');
  // OIDC Core §3.1.2.1 makes redirect_uri required; Tessera requires it for every client.
  if (!redirectUri) throw new UntrustedRedirectError('invalid_request', 'redirect_uri is required');
  // Never a Location with a line break or a space, whatever was registered before today's rules.
  if (UNSAFE_URI_CHARACTERS.test(redirectUri)) {
    throw new UntrustedRedirectError('invalid_request', 'redirect_uri has characters a URI cannot have');
  }
  if (!isRegisteredRedirectUri(client.redirectUris, redirectUri)) {
    const sent = `redirect_uri ${JSON.stringify(redirectUri.slice(0, 512))}`;
    throw new UntrustedRedirectError('invalid_request', 'redirect_uri is not registered for this client', sent);
  }
  return { client, redirectUri };
}

/** The client the request names, which must be known. */
export async function requestingClient(store: ClientStore, params: Params): Promise<Client> {
  if ((params.get('client_id')?.length ?? 0) > 1)
    throw new UntrustedRedirectError('invalid_request', 'client_id is included more than once');
  const clientId = single(params, 'client_id');
  if (!clientId) throw new UntrustedRedirectError('invalid_request', 'client_id is required');
  let client;
  try {
    client = await store.getClient(clientId);
  } catch (err) {
    // A client ID metadata document that cannot be used: shown, not redirected (its redirect URIs are unknown).
    if (err instanceof ClientDocumentError) throw new UntrustedRedirectError('invalid_client', err.message);
    throw err;
  }
  if (!client) throw new UntrustedRedirectError('invalid_client', 'the client is unknown', 'no such client');
  return client;
}

/** OIDC Core §6: a request object left is one nobody resolved (./request-object.ts); request_uri only as PAR's. */
export function noRequestObjects(params: Params): void {
  if (params.has('request')) throw new RequestNotSupported('request objects are not supported');
  if (params.has('request_uri')) throw new RequestUriNotSupported('request_uri is not supported');
}

/**
 * RFC 9126 §5, §6: where the server (TESSERA_REQUIRE_PAR) or the client requires pushed authorization
 * requests, a plain one is refused. Read from the config and the client in hand: nothing more read.
 */
export function pushedIfRequired(config: { requirePushedAuthorizationRequests?: boolean }, client: Client): void {
  if (config.requirePushedAuthorizationRequests || client.requirePushedAuthorizationRequests) {
    throw new InvalidRequest(
      'this client must push its authorization requests (pushed_authorization_request_endpoint)',
    );
  }
}

/** RFC 6749 §4.1.1: response_type=code, for a client allowed the authorization code grant. */
export function responseType(params: Params, client: Client): void {
  const responseType = required(params, 'response_type');
  if (responseType !== 'code') throw new UnsupportedResponseType('only response_type=code is supported');
  if (!client.grantTypes.includes('authorization_code')) {
    throw new UnauthorizedClient('the client is not allowed to use the authorization code grant');
  }
}

/** RFC 6749 §3.3: known scopes the client is registered for. */
export function scope(params: Params, client: Client, known: ReadonlyMap<string, string>): string[] {
  const scopeParam = required(params, 'scope');
  const scopes = parseScope(scopeParam);
  const unknown = scopes.filter((s) => !known.has(s));
  if (unknown.length > 0)
    throw new InvalidScope('scope names a scope this server does not know', `unknown: ${unknown.join(' ')}`);
  checkAllowedScopes(scopes, client.scopes);
  checkAdminClient(scopes, client);
  return scopes;
}

/** RFC 7636 §4.3, §4.4.1: S256 only; required for public clients. */
export function pkce(
  params: Params,
  client: Client,
): { codeChallenge: string | null; codeChallengeMethod: string | null } {
  const codeChallenge = single(params, 'code_challenge');
  const method = single(params, 'code_challenge_method');
  if (!codeChallenge) {
    if (method) throw new InvalidRequest('code_challenge_method was sent without code_challenge');
    if (client.tokenEndpointAuthMethod === 'none') {
      throw new InvalidRequest(
        'PKCE is required for public clients: send code_challenge with code_challenge_method=S256',
      );
    }
    return { codeChallenge: null, codeChallengeMethod: null };
  }
  // A missing method means "plain" (RFC 7636 §4.3), which Tessera does not accept.
  if (method !== 'S256') throw new InvalidRequest('code_challenge_method must be S256');
  if (!isWellFormedPkceValue(codeChallenge)) {
    throw new InvalidRequest('code_challenge must be 43 to 128 characters of [A-Za-z0-9-._~]');
  }
  return { codeChallenge, codeChallengeMethod: 'S256' };
}

/** OIDC Core §3.1.2.1: known prompt values; "none" must not be combined with any other. */
export function prompt(params: Params): string[] {
  const prompts = (single(params, 'prompt') ?? '').split(' ').filter((p) => p !== '');
  for (const prompt of prompts) {
    if (!PROMPTS.includes(prompt)) {
      throw new InvalidRequest(`prompt may only be ${PROMPTS.join(', ')}`, `prompt ${JSON.stringify(prompt)}`);
    }
  }
  if (prompts.includes('none') && prompts.length > 1)
    throw new InvalidRequest('prompt=none must not be combined with other values');
  return prompts;
}

/** OIDC Core §3.1.2.1: display, one of the values defined; it changes nothing on the pages. */
export function display(params: Params): void {
  const display = single(params, 'display');
  if (display !== undefined && !DISPLAYS.includes(display))
    throw new InvalidRequest(
      `display may only be ${DISPLAYS.join(', ')}`,
      `display ${JSON.stringify(display.slice(0, 64))}`,
    );
}

/** RFC 9449 §10 dpop_jkt: the thumbprint (SHA-256, base64url) of the DPoP key the code is bound to. */
export function dpopJkt(params: Params): string | undefined {
  const jkt = single(params, 'dpop_jkt');
  if (jkt !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(jkt)) {
    throw new InvalidRequest('dpop_jkt must be a JWK SHA-256 thumbprint');
  }
  return jkt;
}

/** OIDC Core §3.1.2.1: max_age, seconds. */
export function maxAge(params: Params): number | null {
  const maxAge = single(params, 'max_age');
  if (maxAge === undefined) return null;
  if (!/^\d{1,10}$/.test(maxAge)) throw new InvalidRequest('max_age must be a non-negative integer');
  return Number(maxAge);
}

/** OIDC Core §3.1.2.1: acr_values, space-separated, in order of preference. */
export function acrValues(params: Params): string[] {
  return (single(params, 'acr_values') ?? '').split(' ').filter((v) => v !== '');
}

/**
 * Hints for the sign-in page, kept only when present and of a sane length: login_hint (OIDC Core
 * §3.1.2.1), which an upstream provider is given too, idp_hint (Keycloak's kc_idp_hint), an
 * upstream provider's id to go straight to, and ui_locales (§3.1.2.1), the languages the pages are
 * shown in, in order of preference (src/i18n). None is ever an error: a hint is only a hint.
 * claims_locales is accepted and has no effect: no claim Tessera holds has versions by language.
 */
export function signInHints(params: Params): { loginHint?: string; idpHint?: string; uiLocales?: string[] } {
  const loginHint = single(params, 'login_hint');
  const idpHint = single(params, 'idp_hint');
  const locales = single(params, 'ui_locales');
  // A returning user's request usually has none of them: nothing to look at, nothing to add.
  if (loginHint === undefined && idpHint === undefined && locales === undefined) return {};
  const uiLocales = (locales ?? '')
    .split(' ')
    .filter((tag) => /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(tag))
    .slice(0, 8);
  return {
    ...(loginHint && loginHint.length <= 256 ? { loginHint } : {}),
    ...(idpHint && /^[a-z0-9][a-z0-9-]{0,39}$/.test(idpHint) ? { idpHint } : {}),
    ...(uiLocales.length > 0 ? { uiLocales } : {}),
  };
}
