// The authorization endpoint (RFC 6749 §4.1.1, OIDC Core §3.1.2): the request's checks as a list of
// named steps (./checks.ts), then login, consent and the code. Until the client and its redirect URI
// are trusted, errors are shown to the user; after that they go back to the client as a redirect
// carrying `state` and `iss` (RFC 9207), unless the client registered itself and its redirect URI is
// not one Tessera may send a browser to unasked (../registration/trust.ts): then the error page.
// Consent is ./consent.ts; the answers that end a request at the client, ./outcome.ts.
import { requirementFor } from '../../authn/policy.ts';
import { type BrowserSession as Session, sessionUser } from '../../authn/session.ts';
import { advance } from '../../authn/flow.ts';
import { shortfall } from '../../authn/sufficiency.ts';
import {
  ConsentRequired,
  LoginRequired,
  OAuthError,
  UnmetAuthenticationRequirements,
  UntrustedRedirectError,
} from '../../errors/index.ts';
import type { Client } from '../../store/clients.ts';
import type { AuthorizationRequest as Request, Interaction } from '../interaction.ts';
import { type Params, rejectDuplicates, single } from '../params.ts';
import { checkScopesForResource, knownResource, resourceParam } from '../resources.ts';
import { checkAdminUser } from '../scopes.ts';
import { allowedClaims, claimsParam } from '../claims-request.ts';
import * as check from './checks.ts';
import { scopesNeedingConsent } from './consent.ts';
import { type AuthorizeDeps, errorRedirect, issueCode, type Outcome } from './outcome.ts';
import { namesPushedRequest, pushedRequest } from './request-uri.ts';

export type { AuthorizeDeps, AuthorizeOutcome, Rejected } from './outcome.ts';

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
