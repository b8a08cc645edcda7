// The authorization endpoint (RFC 6749 §4.1.1, OIDC Core §3.1.2): the request's checks as a list of
// named steps (./checks.ts), then login, consent and the code. Until the client and its redirect URI
// are trusted, errors are shown to the user; after that they go back to the client as a redirect
// carrying `state` and `iss` (RFC 9207), unless the client registered itself and its redirect URI is
// not one Tessera may send a browser to unasked (../registration/trust.ts): then the error page.
import { requirementFor } from '../../authn/policy.ts';
import { type BrowserSession as Session, sessionUser, signInClaims } from '../../authn/session.ts';
import { advance, type PendingSignInSealer, type SignInDeps } from '../../authn/flow.ts';
import { shortfall } from '../../authn/sufficiency.ts';
import type { Config } from '../../config/index.ts';
import {
  AccessDenied,
  ConsentRequired,
  LoginRequired,
  OAuthError,
  UntrustedRedirectError,
} from '../../errors/index.ts';
import { UnmetAuthenticationRequirements } from '../../errors/index.ts';
import { type Requester, securityEvent } from '../../events/index.ts';
import { claimsForScopes } from '../../tokens/claims.ts';
import type { Client, ClientStore } from '../../store/clients.ts';
import type { ResourceStore } from '../../store/resources.ts';
import type { SessionStore } from '../../store/sessions.ts';
import type { User } from '../../store/users.ts';
import type { CodeSealer } from '../codes.ts';
import type { AuthorizationRequest as Request, Interaction, InteractionSealer } from '../interaction.ts';
import { type Params, rejectDuplicates, single } from '../params.ts';
import { redirectWith } from '../redirect.ts';
import { redirectsErrors } from '../registration/trust.ts';
import { checkScopesForResource, knownResource, resourceParam } from '../resources.ts';
import { checkAdminUser } from '../scopes.ts';
import { allowedClaims, claimsParam, scopesOfClaims, serializeClaimsRequest } from '../claims-request.ts';
import * as check from './checks.ts';
import { namesPushedRequest, pushedRequest } from './request-uri.ts';
import type { RequestObjects } from './request-object.ts';
import type { OneTimeStore } from '../../store/one-time.ts';

export interface AuthorizeDeps {
  /** `mfa`: TESSERA_MFA and its scopes; absent, `optional` and none. */
  config: Pick<Config, 'issuer' | 'codeTtl' | 'scopes'> &
    Partial<Pick<Config, 'mfa' | 'requirePushedAuthorizationRequests'>>;
  store: ClientStore & SignInDeps['store'] & SessionStore & ResourceStore & Pick<OneTimeStore, 'takePushedRequest'>;
  sealer: InteractionSealer;
  /** Seals a step-up's sign-in in progress (src/authn/flow.ts). */
  pending: PendingSignInSealer;
  codes: CodeSealer;
  /** Verifies request objects (`request`); without it they are request_not_supported. */
  requestObjects?: RequestObjects;
}

/** Why a request was refused, for the operator's log: the error, its description, and what was sent. */
export interface Rejected {
  error: string;
  description: string;
  detail: string | undefined;
  /** The client_id the request names (it may be unknown). */
  clientId: string | undefined;
}

export type AuthorizeOutcome =
  | { kind: 'error-page'; rejected: Rejected }
  | { kind: 'redirect'; location: string; rejected?: Rejected }
  | { kind: 'login'; interaction: string }
  /** A step-up: the session's sign-in goes on at /login/<method> (src/authn/flow.ts). */
  | { kind: 'step'; method: string; pending: string }
  | { kind: 'consent'; interaction: string };
type Outcome = Promise<AuthorizeOutcome>;

/** How long the user has to complete login and consent. */
const INTERACTION_TTL = 30 * 60;

/**
 * The steps after the client and its redirect URI are trusted, in order; each reports to the client.
 * `pushed`: the request came through the pushed authorization request endpoint (RFC 9126), or is
 * being pushed there.
 */
export function checkRequest(
  config: AuthorizeDeps['config'],
  client: Client,
  redirectUri: string,
  params: Params,
  pushed = false,
): { request: Request; acrValues: string[] } {
  // Before the duplicates: a repeated resource is invalid_target (RFC 8707 §2), one per request here.
  const resource = resourceParam(params) ?? null;
  rejectDuplicates(params);
  check.noRequestObjects(params);
  if (!pushed) check.pushedIfRequired(config, client);
  check.responseType(params, client);
  const scopes = check.scope(params, client, config.scopes);
  const pkce = check.pkce(params, client);
  const prompts = check.prompt(params);
  const maxAge = check.maxAge(params);
  check.display(params);
  const asked = claimsParam(params);
  // OIDC Core §5.5.1.1: acr asked with value(s) in the claims parameter stands for acr_values.
  const acrValues = params.has('acr_values') ? check.acrValues(params) : (asked?.acrValues ?? []);
  const claims = asked && allowedClaims(asked.request, client.scopes);
  const dpopJkt = check.dpopJkt(params);
  const [state, nonce] = [single(params, 'state') ?? null, single(params, 'nonce') ?? null];
  const request = { clientId: client.clientId, redirectUri, scopes, state, nonce, ...pkce, prompts, maxAge, resource };
  const extras = { ...(claims ? { claims } : {}), ...(dpopJkt !== undefined ? { dpopJkt } : {}) };
  return { request: Object.assign(request, check.signInHints(params), extras), acrValues };
}

/**
 * An error the client hears of (RFC 6749 §4.1.2.1), redirected when the user chose to go back (the
 * consent page's Deny), or when the redirect URI is one Tessera may send a browser to unasked; either
 * way with what the operator's log says of it (`rejected`).
 */
function errorRedirect(
  issuer: string,
  target: { redirectUri: string } & ({ client: Client } | { chosenByUser: true }),
  state: string | null,
  err: OAuthError,
  clientId: string,
): AuthorizeOutcome {
  const rejected = { error: err.error, description: err.message, detail: err.detail, clientId };
  if ('client' in target && !redirectsErrors(target.client, target.redirectUri)) {
    return { kind: 'error-page', rejected };
  }
  const error = { error: err.error, error_description: err.message, state, iss: issuer };
  return { kind: 'redirect', location: redirectWith(target.redirectUri, error), rejected };
}

/**
 * `bind` gives the browser's binding, asked for only when the request must wait for the user (a
 * sealed interaction): a returning user's request, answered with a code at once, sets nothing.
 */
export async function authorize(
  deps: AuthorizeDeps,
  params: Params,
  session: Session | undefined,
  now: number,
  bind?: () => string,
): Outcome {
  let trusted: { client: Client; redirectUri: string };
  // A pushed request (RFC 9126 §4): its own parameters. A plain request reads nothing more.
  const pushed = namesPushedRequest(params);
  try {
    if (pushed) params = await pushedRequest(deps.store, params, now);
    // A request object (RFC 9101): its parameters in place of the query's, once the client's key verified it.
    if (deps.requestObjects && params.has('request')) {
      params = await deps.requestObjects.resolve(await check.requestingClient(deps.store, params), params, now);
    }
    trusted = await check.clientAndRedirectUri(deps.store, params);
  } catch (err) {
    if (!(err instanceof UntrustedRedirectError)) throw err;
    const rejected = { error: err.error, description: err.message, detail: err.detail };
    return { kind: 'error-page', rejected: { ...rejected, clientId: params.get('client_id')?.[0] } };
  }
  let checked: { request: Request; acrValues: string[] };
  try {
    checked = checkRequest(deps.config, trusted.client, trusted.redirectUri, params, pushed);
    const { resource, scopes } = checked.request;
    if (resource !== null) checkScopesForResource(scopes, await knownResource(deps.store, resource));
  } catch (err) {
    if (!(err instanceof OAuthError)) throw err;
    const state = params.get('state')?.[0] || null;
    return errorRedirect(deps.config.issuer, trusted, state, err, trusted.client.clientId);
  }
  const { request, acrValues } = checked;
  const { mfa } = deps.config;
  const facts = {
    prompts: request.prompts,
    maxAge: request.maxAge,
    acrValues,
    scopes: request.scopes,
    clientRequiresMfa: trusted.client.requireMfa === true,
    ...(mfa ? { mfa: mfa.mode, mfaScopes: mfa.scopes } : {}),
  };
  const need = requirementFor(facts, now);
  const interaction: Interaction = { request, need, exp: now + INTERACTION_TTL };
  return continueAuthorization(deps, trusted.client, interaction, session, now, bind);
}

/**
 * Login, then consent, then the code: resumed after each page the user submits. After a login the
 * caller passes the interaction's requirement with `forceLogin: false`.
 */
export async function continueAuthorization(
  deps: AuthorizeDeps,
  client: Client,
  interaction: Interaction,
  session: Session | undefined,
  now: number,
  bind?: () => string,
): Outcome {
  const { request } = interaction;
  const seal = () => deps.sealer.seal({ ...interaction, browser: interaction.browser ?? bind?.() });
  const fail = (err: OAuthError) =>
    errorRedirect(
      deps.config.issuer,
      { client, redirectUri: request.redirectUri },
      request.state,
      err,
      client.clientId,
    );
  const user = await sessionUser(deps.store, session);
  const lacking = shortfall(session, user, interaction.need);
  if (lacking || !session || !user) {
    // OIDC Core §3.1.2.6: without a page, a session that is not enough is login_required.
    if (request.prompts.includes('none')) return fail(new LoginRequired('the user must log in'));
    if (lacking !== 'level' || !session || !user) return { kind: 'login', interaction: seal() };
    // A step-up: the session is fresh but short of the level asked; its sign-in goes on from its factors.
    const progress = await advance(deps, {
      user,
      factors: session.factors,
      authTime: session.authTime,
      need: interaction.need,
      resume: seal(),
      clientId: request.clientId,
      bind: () => interaction.browser ?? bind!(),
      now,
    });
    if (progress.kind === 'next-step') return { kind: 'step', method: progress.method, pending: progress.pending };
    return fail(new UnmetAuthenticationRequirements('the sign-in cannot meet the authentication the client asked for'));
  }
  try {
    checkAdminUser(request.scopes, user);
  } catch (err) {
    return fail(err as OAuthError);
  }
  const missing = client.firstParty ? [] : await scopesNeedingConsent(deps.store, session, request);
  if (missing.length > 0) {
    if (request.prompts.includes('none')) return fail(new ConsentRequired('the user must consent'));
    return { kind: 'consent', interaction: seal() };
  }
  return issueCode(deps, client, interaction, session, user, now);
}

/** Scopes still to be approved: the new ones, or all of them on prompt=consent. */
export async function scopesNeedingConsent(store: SessionStore, session: Session, request: Request): Promise<string[]> {
  const asked = consentScopes(request);
  if (request.prompts.includes('consent')) return asked;
  const { consented } = session;
  const granted =
    consented?.clientId === request.clientId
      ? consented.scopes
      : await store.getConsentedScopes(session.userId, request.clientId);
  return asked.filter((s) => !granted.includes(s));
}

/** The scopes a consent covers: the request's, and those of the claims its claims parameter asks for. */
function consentScopes(request: Request): string[] {
  if (!request.claims) return request.scopes;
  return [...new Set([...request.scopes, ...scopesOfClaims(request.claims)])];
}

/** The user's answer on the consent page. */
export async function completeConsent(
  deps: AuthorizeDeps,
  interaction: Interaction,
  session: Session,
  user: User,
  allow: boolean,
  now: number,
  requester?: Requester,
): Outcome {
  const { request } = interaction;
  if (!allow) {
    // The consent page said where Deny returns to (../registration/trust.ts): the user chose to go there.
    const denied = new AccessDenied('the user denied the request');
    const target = { redirectUri: request.redirectUri, chosenByUser: true } as const;
    return errorRedirect(deps.config.issuer, target, request.state, denied, request.clientId);
  }
  const granted = await deps.store.getConsentedScopes(session.userId, request.clientId);
  const scopes = [...new Set([...granted, ...consentScopes(request)])];
  const consented = securityEvent('consent.granted', now, {
    userId: session.userId,
    clientId: request.clientId,
    requester,
    data: { scopes: request.scopes },
  });
  await deps.store.saveConsent(session.userId, request.clientId, scopes, now, consented);
  // The roles it may see: a client changed since the consent page showed is read as it is now.
  const client = await deps.store.getClient(request.clientId);
  if (!client)
    return errorRedirect(
      deps.config.issuer,
      { redirectUri: request.redirectUri, chosenByUser: true },
      request.state,
      new AccessDenied('the client no longer exists'),
      request.clientId,
    );
  return issueCode(deps, client, interaction, session, user, now);
}

function issueCode(
  deps: AuthorizeDeps,
  client: Pick<Client, 'allowedRoles'>,
  { request, need }: Interaction,
  session: Session,
  user: User,
  now: number,
): AuthorizeOutcome {
  const { clientId, redirectUri, scopes, codeChallenge, codeChallengeMethod, nonce } = request;
  const claims = claimsForScopes(user, scopes, client, request.claims?.idToken);
  const fields = { clientId, userId: session.userId, redirectUri, scope: scopes.join(' '), codeChallenge };
  const resource = request.resource ?? null;
  // The sign-in's methods and level travel in the code to the ID token (RFC 8176, OIDC Core §2).
  // auth_time is the last factor's time, from which max_age counts too: a relying party that checks
  // max_age against auth_time itself (OIDC Core §3.1.2.1) agrees with us after a step-up.
  const { authTime, amr, acr } = signInClaims(session.factors, need.acrValues);
  const claimsRequest = request.claims ? serializeClaimsRequest(request.claims) : null;
  const sealed = {
    ...fields,
    codeChallengeMethod,
    nonce,
    authTime,
    amr,
    acr,
    claims,
    resource,
    claimsRequest,
    sid: session.sid ?? null,
    ...(request.dpopJkt !== undefined ? { dpopJkt: request.dpopJkt } : {}),
  };

  const code = deps.codes.issue(sealed, now, deps.config.codeTtl);
  return {
    kind: 'redirect',
    location: redirectWith(redirectUri, { code, state: request.state, iss: deps.config.issuer }),
  };
}
