// What the authorization endpoint answers (./index.ts, ./consent.ts): an error page, a redirect with
// the error or the code, or a page for the user; and the two answers that end a request at the
// client: an error redirect, and the code that carries the sign-in to the token endpoint.
import { signInClaims, type BrowserSession as Session } from '../../authn/session.ts';
import type { PendingSignInSealer, SignInDeps } from '../../authn/flow.ts';
import type { Config } from '../../config/index.ts';
import type { OAuthError } from '../../errors/index.ts';
import { claimsForScopes } from '../../tokens/claims.ts';
import type { Client, ClientStore } from '../../store/clients.ts';
import type { ResourceStore } from '../../store/resources.ts';
import type { SessionStore } from '../../store/sessions.ts';
import type { User } from '../../store/users.ts';
import type { OneTimeStore } from '../../store/one-time.ts';
import type { CodeSealer } from '../codes.ts';
import type { Interaction, InteractionSealer } from '../interaction.ts';
import { redirectWith } from '../redirect.ts';
import { redirectsErrors } from '../registration/trust.ts';
import { serializeClaimsRequest } from '../claims-request.ts';
import type { RequestObjects } from './request-object.ts';

/** What the authorization endpoint works with: its settings, its stores and its sealers. */
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
export type Outcome = Promise<AuthorizeOutcome>;

/**
 * An error the client hears of (RFC 6749 §4.1.2.1), redirected when the user chose to go back (the
 * consent page's Deny), or when the redirect URI is one Tessera may send a browser to unasked; either
 * way with what the operator's log says of it (`rejected`).
 */
export function errorRedirect(
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

/** The code for the request, redirected to the client with `state` and `iss` (RFC 9207). */
export function issueCode(
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
