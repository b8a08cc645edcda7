// Logout tokens (OpenID Connect Back-Channel Logout 1.0 §2.4): a JWT signed as the client's ID tokens
// are, `typ` `logout+jwt` (§2.4, as the conformance suite checks), that tells the client that the
// user `sub` signed out of the session `sid`. It carries the back-channel logout event and never a
// `nonce` (§2.4: so that it cannot be taken for an ID token).
import type { KeyStore, SigningAlg } from '../tokens/keystore.ts';
import { signJws } from '../tokens/jwt.ts';
import { newId } from '../tokens/opaque.ts';

export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** Seconds a logout token is valid: it is signed at each attempt, so it need only outlast one. */
export const LOGOUT_TOKEN_TTL = 120;

export interface LogoutTokenInput {
  issuer: string;
  clientId: string;
  sub: string;
  sid: string | null;
  now: number;
  alg: SigningAlg;
}

export function signLogoutToken(keys: KeyStore, input: LogoutTokenInput): Promise<string> {
  return signJws(keys.signingKey(input.alg), 'logout+jwt', {
    iss: input.issuer,
    sub: input.sub,
    aud: input.clientId,
    iat: input.now,
    exp: input.now + LOGOUT_TOKEN_TTL,
    jti: newId(),
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    ...(input.sid ? { sid: input.sid } : {}),
  });
}
