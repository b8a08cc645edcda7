// A validated authorization request that waits for the user (login or consent). It travels in the
// login and consent pages as a sealed value (src/tokens/sealed.ts), so Tessera keeps no state per pending
// request and the value cannot be altered by the browser.
import type { Requirement } from '../authn/requirement.ts';
import type { ClaimsRequest } from './claims-request.ts';
import { Sealer } from '../tokens/sealed.ts';
import type { Secrets } from '../tokens/secrets.ts';

export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  scopes: string[];
  state: string | null;
  nonce: string | null;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  prompts: string[];
  maxAge: number | null;
  /** The API the access token is for (RFC 8707), or null for the default audience. */
  resource: string | null;
  /** OIDC Core §3.1.2.1 login_hint: passed on to an upstream provider, whose email domain may pick one. */
  loginHint?: string;
  /** `idp_hint` (Keycloak's kc_idp_hint): the upstream provider to sign in with, by its id. */
  idpHint?: string;
  /**
   * The claims parameter (OIDC Core §5.5): the user's claims asked for in the ID token and at
   * userinfo, those the client may learn (src/oauth/claims-request.ts); absent without one.
   */
  claims?: ClaimsRequest;
  /** RFC 9449 §10 dpop_jkt: the DPoP key the code is bound to; absent: none. */
  dpopJkt?: string;
  /** OIDC Core §3.1.2.1 ui_locales: the languages the pages are asked in, preferred first (src/i18n). */
  uiLocales?: string[];
}

export interface Interaction {
  request: AuthorizationRequest;
  /**
   * What the session must satisfy (src/authn/policy.ts): prompt=login, max_age, acr_values. After a
   * sign-in the interaction goes on with `forceLogin: false`: the login asked for has happened.
   */
  need: Requirement;
  /** Expiry, epoch seconds. */
  exp: number;
  /** The browser it was started in (src/http/browser.ts binding): refused in any other. */
  browser?: string;
}

export class InteractionSealer extends Sealer<Interaction> {
  constructor(secrets: Secrets) {
    super(secrets, 'tessera interaction v2');
  }
}
