// The consent step of the authorization endpoint: which scopes a request still needs approved, and
// the user's answer on the consent page, which ends with the code or an error for the client.
import type { BrowserSession as Session } from '../../authn/session.ts';
import { AccessDenied } from '../../errors/index.ts';
import { type Requester, securityEvent } from '../../events/index.ts';
import type { SessionStore } from '../../store/sessions.ts';
import type { User } from '../../store/users.ts';
import type { AuthorizationRequest as Request, Interaction } from '../interaction.ts';
import { scopesOfClaims } from '../claims-request.ts';
import { type AuthorizeDeps, errorRedirect, issueCode, type Outcome } from './outcome.ts';

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
