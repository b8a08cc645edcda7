// A validated authorization request that waits for the user (login or consent). It travels in the
// login and consent pages as a sealed value (HMAC-SHA-256), so Tessera keeps no state per pending
// request and the value cannot be altered by the browser.
import { createHmac, hkdfSync } from 'node:crypto';
import { safeEqual } from '../tokens/opaque.ts';

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
}

export interface Interaction {
  request: AuthorizationRequest;
  /** prompt=login: the user must sign in during this request, whatever the session. */
  forceLogin: boolean;
  /** The session must have authenticated at or after this time (max_age, and prompt=login). */
  minAuthTime: number;
  /** Expiry, epoch seconds. */
  exp: number;
}

export class InteractionSealer {
  readonly #key: Buffer;
  constructor(secret: string) {
    this.#key = Buffer.from(hkdfSync('sha256', secret, 'tessera', 'tessera interaction v1', 32));
  }

  seal(interaction: Interaction): string {
    const body = Buffer.from(JSON.stringify(interaction)).toString('base64url');
    return `${body}.${this.#mac(body)}`;
  }

  /** The interaction, or undefined when tampered with, malformed or expired. */
  open(sealed: string, now: number): Interaction | undefined {
    const dot = sealed.indexOf('.');
    if (dot <= 0) return undefined;
    const body = sealed.slice(0, dot);
    if (!safeEqual(this.#mac(body), sealed.slice(dot + 1))) return undefined;
    try {
      const interaction = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Interaction;
      return interaction.exp > now ? interaction : undefined;
    } catch {
      return undefined;
    }
  }

  #mac(body: string): string {
    return createHmac('sha256', this.#key).update(body).digest('base64url');
  }
}
