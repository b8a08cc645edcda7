// What a sign-in through an upstream provider keeps while the person is away at the provider (an
// UpstreamFlow, in a cookie) and, when their account there is not linked to one here yet, while they
// prove which account is theirs (a PendingLink, on the link page). Both are encrypted (SealedBox):
// the flow holds the PKCE verifier and the nonce, which must not be readable where the browser's
// cookies or URLs are, and the link the person's email. Both are bound to the browser and short-lived.
import type { Requirement } from '../requirement.ts';
import { SealedBox } from '../../tokens/sealed.ts';
import type { Secrets } from '../../tokens/secrets.ts';
import type { CallbackChecks } from '../../upstream/index.ts';

/** How long the person may take at the provider, or to prove their account. */
export const UPSTREAM_FLOW_TTL = 10 * 60;

export interface UpstreamFlow {
  provider: string;
  /** Sign in (from a sign-in page), or link another way in to the signed-in user (the account page). */
  purpose: 'sign-in' | 'link';
  checks: CallbackChecks;
  /** The sealed authorization request to resume, or null for the account page. */
  resume: string | null;
  clientId: string | null;
  /** What the request needs of the session (its interaction's), or any sign-in for the account page. */
  need: Requirement;
  /** The user who asked to link (purpose 'link'); null for a sign-in. */
  userId: string | null;
  /** The browser it was started in (src/http/browser.ts binding). */
  browser: string;
  exp: number;
}

/** An upstream person with no link yet, waiting to prove which account here is theirs. */
export interface PendingLink {
  provider: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  /** Why: an account here has their verified email, or the provider only links. */
  reason: 'email_exists' | 'link_only';
  resume: string | null;
  clientId: string | null;
  need: Requirement;
  browser: string;
  exp: number;
}

class Expiring<T extends { exp: number }> extends SealedBox<T> {
  /** The value, when genuine, unexpired and sealed for this purpose. */
  openAt(sealed: string | undefined, now: number): T | undefined {
    const value = sealed ? this.open(sealed, now * 1000) : undefined;
    return value && value.exp > now ? value : undefined;
  }
}

export class UpstreamFlowSealer extends Expiring<UpstreamFlow> {
  constructor(secrets: Secrets) {
    super(secrets, 'tessera upstream flow v1');
  }
}

export class PendingLinkSealer extends Expiring<PendingLink> {
  constructor(secrets: Secrets) {
    super(secrets, 'tessera upstream pending link v1');
  }
}
