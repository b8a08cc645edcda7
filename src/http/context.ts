// What the routes share, built once in buildApp.
import type { RelyingParty } from '../authn/passkeys/relying-party.ts';
import type { PendingSignInSealer } from '../authn/flow.ts';
import type { TotpEnrolmentDeps } from '../authn/totp/enrolment.ts';
import type { Config } from '../config/index.ts';
import type { Lifecycle } from '../lifecycle.ts';
import type { MailSettings } from '../mail/compose.ts';
import type { ClientAuthThrottle } from '../oauth/client-auth/throttle.ts';
import type { ClientAssertions } from '../oauth/client-auth/assertion.ts';
import type { DpopProofs } from '../oauth/dpop.ts';
import type { AssertionIssuers } from '../oauth/grants/types.ts';
import type { RequestObjects } from '../oauth/authorize/request-object.ts';
import type { ThrottleObserver } from '../authn/throttle.ts';
import type { CodeSealer } from '../oauth/codes.ts';
import type { InteractionSealer } from '../oauth/interaction.ts';
import type { Store } from '../store/store.ts';
import type { KeyStore } from '../tokens/keystore.ts';
import type { PendingLinkSealer, UpstreamFlowSealer } from '../authn/upstream/flow.ts';
import type { UpstreamDeps } from '../upstream/index.ts';
import type { RefreshTokens } from '../tokens/refresh.ts';
import type { BrowserState } from './browser.ts';

export interface RouteContext {
  config: Config;
  store: Store;
  keys: KeyStore;
  sealer: InteractionSealer;
  /** A sign-in between its steps (src/authn/flow.ts). */
  pending: PendingSignInSealer;
  codes: CodeSealer;
  /** Tessera as a WebAuthn relying party: passkeys' options and checks (src/authn/passkeys). */
  relyingParty: RelyingParty;
  /** Authenticator apps' enrolment and secrets (src/authn/totp), the keyring that opens them. */
  secondFactors: TotpEnrolmentDeps;
  refreshTokens: RefreshTokens;
  browser: BrowserState;
  /** Epoch seconds; injectable so tests can move time without sleeping. */
  now: () => number;
  lifecycle: Lifecycle;
  /** Counts failed and refused sign-ins and client authentications (the metrics). */
  security: ThrottleObserver;
  /** This instance's view of throttled client authentications (src/oauth/client-auth/throttle.ts). */
  clientThrottle: ClientAuthThrottle;
  /** Checks client assertions (private_key_jwt, client_secret_jwt), with the client keys it fetched. */
  clientAssertions: ClientAssertions;
  /** DPoP proofs at the token endpoint and userinfo (RFC 9449), their jti used once, nonces if required. */
  dpop: DpopProofs;
  /** Verifies request objects (RFC 9101) with the same clients' keys. */
  requestObjects: RequestObjects;
  /** What mails need: the keyring their messages are encrypted under, the mail settings, the issuer (src/mail). */
  mail: MailSettings;
  /** Upstream providers (src/upstream): how they are reached, and what a sign-in through one keeps in the browser. */
  upstream: { deps: UpstreamDeps; flows: UpstreamFlowSealer; links: PendingLinkSealer };
  /** The issuers of ID-JAGs redeemed at the token endpoint: the upstream providers, and their keys. */
  issuers: AssertionIssuers;
}
