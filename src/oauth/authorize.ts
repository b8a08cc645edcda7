// The authorization endpoint (RFC 6749 §4.1.1, OIDC Core §3.1.2) as a pipeline of named steps.
// Until the client and its redirect URI are trusted, errors are shown to the user; after that they
// go back to the client as a redirect carrying `state` and `iss` (RFC 9207).
import type { Config } from '../config/index.ts';
import { claimsForScopes } from '../oidc/claims.ts';
import {
  ConsentRequired,
  InvalidRequest,
  InvalidScope,
  LoginRequired,
  OAuthError,
  RequestNotSupported,
  RequestUriNotSupported,
  UnauthorizedClient,
  UnsupportedResponseType,
  UntrustedRedirectError,
} from '../errors/index.ts';
import type { Client, Store, User } from '../store/store.ts';
import type { CodeSealer } from './codes.ts';
import type { AuthorizationRequest, InteractionSealer, Interaction } from './interaction.ts';
import { type Params, rejectDuplicates, single } from './params.ts';
import { isWellFormedPkceValue } from './pkce.ts';
import { checkAllowedScopes, parseScope } from './scopes.ts';

export interface AuthorizeDeps {
  config: Pick<Config, 'issuer' | 'codeTtl' | 'scopes'>;
  store: Store;
  sealer: InteractionSealer;
  codes: CodeSealer;
}

/** The logged-in user of the browser, if any. */
export interface BrowserSession {
  id: string;
  userId: string;
  authTime: number;
  /** The user, when it was read with the session (undefined also when the user no longer exists). */
  user?: User | undefined;
  /** The scopes consented to for a client, when they were read with the session. */
  consented?: { clientId: string; scopes: string[] };
}

/** The session's user: the one read with it, or from the store. */
export async function sessionUser(store: Store, session: BrowserSession | undefined): Promise<User | undefined> {
  if (!session) return undefined;
  return 'user' in session ? session.user : store.getUserById(session.userId);
}

export type AuthorizeOutcome =
  | { kind: 'error-page'; error: string; description: string }
  | { kind: 'redirect'; location: string }
  | { kind: 'login'; interaction: string }
  | { kind: 'consent'; interaction: string };

const PROMPTS = ['none', 'login', 'consent', 'select_account'];
/** How long the user has to complete login and consent. */
const INTERACTION_TTL = 30 * 60;

/**
 * The registered redirect URI (absolute, without a fragment: RFC 6749 §3.1.2, checked at
 * registration) with `params` added to its query, which it may already have, serialized as
 * URLSearchParams does (application/x-www-form-urlencoded). Built as a string: parsing the URI and
 * going through URLSearchParams cost more than the rest of issuing a code.
 */
export function redirectWith(redirectUri: string, params: Record<string, string | null>): string {
  let location = redirectUri;
  let separator = !redirectUri.includes('?') ? '?' : redirectUri.endsWith('?') || redirectUri.endsWith('&') ? '' : '&';
  for (const key in params) {
    const value = params[key];
    if (value === null || value === undefined) continue;
    location += `${separator}${formEncode(key)}=${formEncode(value)}`;
    separator = '&';
  }
  return location;
}

/** application/x-www-form-urlencoded: encodeURIComponent, less the five characters it leaves and the form encodes, and + for space. */
function formEncode(value: string): string {
  const encoded = encodeURIComponent(value);
  return FORM_EXTRA.test(encoded) ? encoded.replace(FORM_EXTRA_ALL, (c) => (c === '%20' ? '+' : `%${c.charCodeAt(0).toString(16).toUpperCase()}`)) : encoded;
}
const FORM_EXTRA = /[!'()~]|%20/;
const FORM_EXTRA_ALL = /[!'()~]|%20/g;

function errorRedirect(issuer: string, redirectUri: string, state: string | null, err: OAuthError): AuthorizeOutcome {
  return {
    kind: 'redirect',
    location: redirectWith(redirectUri, {
      error: err.error,
      error_description: err.message,
      state,
      iss: issuer,
    }),
  };
}

/** Step 1: the client must be known and the redirect URI registered, exactly (RFC 6749 §3.1.2.3). */
async function checkClientAndRedirectUri(store: Store, params: Params): Promise<{ client: Client; redirectUri: string }> {
  if ((params.get('client_id')?.length ?? 0) > 1) throw new UntrustedRedirectError('invalid_request', 'client_id is included more than once');
  const clientId = single(params, 'client_id');
  if (!clientId) throw new UntrustedRedirectError('invalid_request', 'client_id is required');
  const client = await store.getClient(clientId);
  if (!client) throw new UntrustedRedirectError('invalid_client', 'the client is unknown');
  if ((params.get('redirect_uri')?.length ?? 0) > 1) throw new UntrustedRedirectError('invalid_request', 'redirect_uri is included more than once');
  const redirectUri = single(params, 'redirect_uri');
  // OIDC Core §3.1.2.1 makes redirect_uri required; Tessera requires it for every client.
  if (!redirectUri) throw new UntrustedRedirectError('invalid_request', 'redirect_uri is required');
  if (!client.redirectUris.includes(redirectUri)) {
    throw new UntrustedRedirectError('invalid_request', 'redirect_uri is not registered for this client');
  }
  return { client, redirectUri };
}

/** Steps 2…: everything else, reported to the client. */
function parseRequest(config: AuthorizeDeps['config'], client: Client, redirectUri: string, params: Params): AuthorizationRequest {
  rejectDuplicates(params);
  // OIDC Core §6: request objects are not supported.
  if (params.has('request')) throw new RequestNotSupported('request objects are not supported');
  if (params.has('request_uri')) throw new RequestUriNotSupported('request_uri is not supported');

  const responseType = single(params, 'response_type');
  if (!responseType) throw new InvalidRequest('response_type is required');
  if (responseType !== 'code') throw new UnsupportedResponseType('only response_type=code is supported');
  if (!client.grantTypes.includes('authorization_code')) {
    throw new UnauthorizedClient('the client is not allowed to use the authorization code grant');
  }

  const scopeParam = single(params, 'scope');
  if (!scopeParam) throw new InvalidRequest('scope is required');
  const scopes = parseScope(scopeParam);
  const unknown = scopes.filter((s) => !config.scopes.has(s));
  if (unknown.length > 0) throw new InvalidScope(`unknown scope: ${unknown.join(' ')}`);
  checkAllowedScopes(scopes, client.scopes);

  const { codeChallenge, codeChallengeMethod } = checkPkce(client, params);

  const prompts = (single(params, 'prompt') ?? '').split(' ').filter((p) => p !== '');
  for (const prompt of prompts) {
    if (!PROMPTS.includes(prompt)) throw new InvalidRequest(`unsupported prompt value "${prompt}"`);
  }
  // OIDC Core §3.1.2.1: "none" must not be combined with any other value.
  if (prompts.includes('none') && prompts.length > 1) {
    throw new InvalidRequest('prompt=none must not be combined with other values');
  }

  const maxAgeParam = single(params, 'max_age');
  let maxAge: number | null = null;
  if (maxAgeParam !== undefined) {
    if (!/^\d{1,10}$/.test(maxAgeParam)) throw new InvalidRequest('max_age must be a non-negative integer');
    maxAge = Number(maxAgeParam);
  }

  return {
    clientId: client.clientId,
    redirectUri,
    scopes,
    state: single(params, 'state') ?? null,
    nonce: single(params, 'nonce') ?? null,
    codeChallenge,
    codeChallengeMethod,
    prompts,
    maxAge,
  };
}

/** RFC 7636 §4.3, §4.4.1: S256 only; required for public clients. */
function checkPkce(client: Client, params: Params): { codeChallenge: string | null; codeChallengeMethod: string | null } {
  const codeChallenge = single(params, 'code_challenge');
  const method = single(params, 'code_challenge_method');
  if (!codeChallenge) {
    if (method) throw new InvalidRequest('code_challenge_method was sent without code_challenge');
    if (client.tokenEndpointAuthMethod === 'none') {
      throw new InvalidRequest('PKCE is required for public clients: send code_challenge with code_challenge_method=S256');
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

export async function authorize(
  deps: AuthorizeDeps,
  params: Params,
  session: BrowserSession | undefined,
  now: number,
): Promise<AuthorizeOutcome> {
  let trusted: { client: Client; redirectUri: string };
  try {
    trusted = await checkClientAndRedirectUri(deps.store, params);
  } catch (err) {
    if (err instanceof UntrustedRedirectError) return { kind: 'error-page', error: err.error, description: err.message };
    throw err;
  }
  let request: AuthorizationRequest;
  try {
    request = parseRequest(deps.config, trusted.client, trusted.redirectUri, params);
  } catch (err) {
    if (err instanceof OAuthError) {
      const state = params.get('state')?.[0] ?? null;
      return errorRedirect(deps.config.issuer, trusted.redirectUri, state || null, err);
    }
    throw err;
  }
  // prompt=login demands a login after this request began; max_age bounds the session's age.
  let minAuthTime = 0;
  if (request.prompts.includes('login')) minAuthTime = now;
  else if (request.maxAge !== null) minAuthTime = now - request.maxAge;
  const forceLogin = request.prompts.includes('login');
  const interaction: Interaction = { request, forceLogin, minAuthTime, exp: now + INTERACTION_TTL };
  return continueAuthorization(deps, trusted.client, interaction, session, now);
}

/**
 * Login, then consent, then the code: resumed after each page the user submits. After a login the
 * caller passes the interaction with `forceLogin: false`.
 */
export async function continueAuthorization(
  deps: AuthorizeDeps,
  client: Client,
  interaction: Interaction,
  session: BrowserSession | undefined,
  now: number,
): Promise<AuthorizeOutcome> {
  const { request } = interaction;
  const fail = (err: OAuthError) => errorRedirect(deps.config.issuer, request.redirectUri, request.state, err);
  const user = await sessionUser(deps.store, session);
  const loggedIn = !interaction.forceLogin && session !== undefined && user !== undefined && !user.disabled && session.authTime >= interaction.minAuthTime;
  if (!loggedIn) {
    if (request.prompts.includes('none')) return fail(new LoginRequired('the user must log in'));
    return { kind: 'login', interaction: deps.sealer.seal(interaction) };
  }
  const missing = client.firstParty ? [] : await scopesNeedingConsent(deps.store, session, request);
  if (missing.length > 0) {
    if (request.prompts.includes('none')) return fail(new ConsentRequired('the user must consent'));
    return { kind: 'consent', interaction: deps.sealer.seal(interaction) };
  }
  return issueCode(deps, request, session, user, now);
}

/** Scopes still to be approved: the new ones, or all of them on prompt=consent. */
export async function scopesNeedingConsent(store: Store, session: BrowserSession, request: AuthorizationRequest): Promise<string[]> {
  if (request.prompts.includes('consent')) return request.scopes;
  const granted = session.consented?.clientId === request.clientId ? session.consented.scopes : await store.getConsentedScopes(session.userId, request.clientId);
  return request.scopes.filter((s) => !granted.includes(s));
}

/** The user's answer on the consent page. */
export async function completeConsent(
  deps: AuthorizeDeps,
  interaction: Interaction,
  session: BrowserSession,
  user: User,
  allow: boolean,
  now: number,
): Promise<AuthorizeOutcome> {
  const { request } = interaction;
  if (!allow) {
    return errorRedirect(deps.config.issuer, request.redirectUri, request.state, new OAuthError('access_denied', 'the user denied the request'));
  }
  const granted = await deps.store.getConsentedScopes(session.userId, request.clientId);
  await deps.store.saveConsent(session.userId, request.clientId, [...new Set([...granted, ...request.scopes])], now);
  return issueCode(deps, request, session, user, now);
}

function issueCode(deps: AuthorizeDeps, request: AuthorizationRequest, session: BrowserSession, user: User, now: number): AuthorizeOutcome {
  const code = deps.codes.issue({
    clientId: request.clientId,
    userId: session.userId,
    redirectUri: request.redirectUri,
    scope: request.scopes.join(' '),
    codeChallenge: request.codeChallenge,
    codeChallengeMethod: request.codeChallengeMethod,
    nonce: request.nonce,
    authTime: session.authTime,
    claims: claimsForScopes(user, request.scopes),
  }, now, deps.config.codeTtl);
  return {
    kind: 'redirect',
    location: redirectWith(request.redirectUri, { code, state: request.state, iss: deps.config.issuer }),
  };
}
