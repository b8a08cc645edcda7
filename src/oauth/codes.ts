// Authorization codes (RFC 6749 §4.1.2) are sealed: the code itself carries what the authorization
// request decided, and the user's claims for the ID token, encrypted and authenticated under
// TESSERA_SECRET (SealedBox), so issuing a code writes nothing and redeeming it reads nothing.
// Redeeming one creates the grant under the code's identifier, once, and only while the user is
// still active (Store.redeemAuthorizationCode): that row is what makes a code single-use, and
// housekeeping keeps it at least until the code has expired.
import { perEpoch, type RestoreEpoch } from '../tokens/epoch.ts';
import { SealedBox } from '../tokens/sealed.ts';
import { newSortableId } from '../tokens/opaque.ts';
import type { Secrets } from '../tokens/secrets.ts';

export interface AuthorizationCode {
  /** Identifier, sortable by time and unguessable: the id of the grant its redemption creates. */
  id: string;
  clientId: string;
  userId: string;
  redirectUri: string;
  scope: string;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  nonce: string | null;
  authTime: number;
  /** How the user signed in (RFC 8176), for the ID token's amr; empty when not recorded. */
  amr: readonly string[];
  /** The level the sign-in reached (OIDC Core §2), for the ID token's acr; null when not recorded. */
  acr: string | null;
  /** The API the tokens are for (RFC 8707), or null. */
  resource: string | null;
  /** The sid of the browser session it was issued in (OIDC `sid`), or null. */
  sid: string | null;
  /**
   * The user's claims the code's scopes release (claimsForScopes), as they were when the code was
   * issued: the ID token is made from them, so the token request reads no user.
   */
  claims: Record<string, unknown>;
  /**
   * The claims parameter's claims (./claims-request.ts, as the grant keeps them), for userinfo and
   * refreshed ID tokens; null without one.
   */
  claimsRequest: string | null;
  /** RFC 9449 §10: the DPoP key (thumbprint) the code must be redeemed with; null: any or none. */
  dpopJkt: string | null;
  /** Issued and expiry times, epoch seconds. */
  iat: number;
  exp: number;
}

// The sealed form uses one-letter names: the code travels in a URL.
interface Sealed {
  i: string;
  c: string;
  u: string;
  r: string;
  s: string;
  p: string | null;
  m: string | null;
  n: string | null;
  a: number;
  t: number;
  e: number;
  /** The claims; left out when there are none. */
  k?: Record<string, unknown>;
  /** The resource; left out when there is none. */
  d?: string;
  /** amr, space-separated; left out when empty. */
  x?: string;
  /** acr; left out when null. */
  l?: string;
  /** The claims request; left out when null. */
  q?: string;
  /** The session's sid; left out when null. */
  o?: string;
  /** dpop_jkt; left out when null. */
  j?: string;
}

export class CodeSealer {
  readonly #box: () => SealedBox<Sealed>;
  /**
   * `restoreEpoch`: the database's latest restore fence (src/store/restores.ts), '' before any. Codes
   * sealed before a restore do not open after it: the grants they were redeemed for are gone with
   * the restore, and a code must not be redeemed twice.
   */
  constructor(secrets: Secrets, restoreEpoch: RestoreEpoch = '') {
    this.#box = perEpoch(
      restoreEpoch,
      (epoch) => new SealedBox<Sealed>(secrets, `tessera authorization code v1${epoch ? ` ${epoch}` : ''}`),
    );
  }

  /** A new code for `fields`, valid `ttl` seconds from `now`. */
  issue(
    fields: Omit<AuthorizationCode, 'id' | 'iat' | 'exp' | 'claimsRequest' | 'sid' | 'dpopJkt'> & {
      claimsRequest?: string | null;
      sid?: string | null;
      dpopJkt?: string | null;
    },
    now: number,
    ttl: number,
  ): string {
    return this.#box().seal(
      {
        i: newSortableId(),
        c: fields.clientId,
        u: fields.userId,
        r: fields.redirectUri,
        s: fields.scope,
        p: fields.codeChallenge,
        m: fields.codeChallengeMethod,
        n: fields.nonce,
        a: fields.authTime,
        t: now,
        e: now + ttl,
        ...(Object.keys(fields.claims).length > 0 ? { k: fields.claims } : {}),
        ...(fields.resource !== null ? { d: fields.resource } : {}),
        ...(fields.amr.length > 0 ? { x: fields.amr.join(' ') } : {}),
        ...(fields.acr !== null ? { l: fields.acr } : {}),
        ...(fields.claimsRequest != null ? { q: fields.claimsRequest } : {}),
        ...(fields.sid ? { o: fields.sid } : {}),
        ...(fields.dpopJkt != null ? { j: fields.dpopJkt } : {}),
      },
      now * 1000,
    );
  }

  /** The code's contents, expired or not; undefined when it is not a code this server sealed. */
  open(code: string, now: number): AuthorizationCode | undefined {
    const v = this.#box().open(code, now * 1000);
    if (!v || typeof v.i !== 'string' || typeof v.e !== 'number') return undefined;
    return {
      id: v.i,
      clientId: v.c,
      userId: v.u,
      redirectUri: v.r,
      scope: v.s,
      codeChallenge: v.p,
      codeChallengeMethod: v.m,
      nonce: v.n,
      authTime: v.a,
      claims: v.k ?? {},
      resource: v.d ?? null,
      amr: v.x ? v.x.split(' ') : [],
      acr: v.l ?? null,
      claimsRequest: v.q ?? null,
      sid: v.o ?? null,
      dpopJkt: v.j ?? null,
      iat: v.t,
      exp: v.e,
    };
  }
}
