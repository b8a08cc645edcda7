// The account page's domain: what it shows (the applications with access, the recent sign-ins, the
// apps the user registered) and what it does besides the password (src/authn/password/step.ts):
// withdrawing an application's access, deleting an app the user owns.
import { type Requester, securityEvent } from '../events/index.ts';
import type { ClientStore } from '../store/clients.ts';
import type { EventStore } from '../store/events.ts';
import type { GrantStore } from '../store/grants.ts';
import type { SessionStore } from '../store/sessions.ts';
import type { User } from '../store/users.ts';

export interface AccountApplication {
  clientId: string;
  clientName: string;
  /** The first grant's time, epoch seconds. */
  since: number;
  scopes: Array<{ name: string; description: string }>;
}

export interface AccountOverview {
  applications: AccountApplication[];
  /** When (epoch seconds), from which address (when known), with which browser (its User-Agent). */
  signIns: Array<{ at: number; ip: string | null; userAgent: string }>;
  registeredApps: Array<{ clientId: string; name: string; redirectUris: string[]; created: number }>;
}

function hostOf(clientId: string): string {
  return URL.parse(clientId)?.host ?? clientId;
}

/** What the account page shows of `user`; `scopes` describes each scope. */
export async function accountOverview(
  store: GrantStore & EventStore & ClientStore,
  scopes: ReadonlyMap<string, string>,
  user: User,
  now: number,
): Promise<AccountOverview> {
  const byClient = new Map<string, { clientName: string; scopeSet: Set<string>; createdAt: number }>();
  for (const grant of await store.listActiveGrants(user.id, now)) {
    let entry = byClient.get(grant.clientId);
    if (!entry) {
      // A client known by its metadata document (an https client_id) is not stored: its host names it.
      const clientName = grant.clientName ?? hostOf(grant.clientId);
      byClient.set(grant.clientId, (entry = { clientName, scopeSet: new Set(), createdAt: grant.createdAt }));
    }
    for (const scope of grant.scope.split(' ')) entry.scopeSet.add(scope);
    entry.createdAt = Math.min(entry.createdAt, grant.createdAt);
  }
  const applications = [...byClient].map(([clientId, entry]) => ({
    clientId,
    clientName: entry.clientName,
    since: entry.createdAt,
    scopes: [...entry.scopeSet].map((name) => ({ name, description: scopes.get(name) ?? name })),
  }));
  const signIns = (await store.listEvents({ userId: user.id, type: 'user.signed_in', limit: 10 })).map((e) => ({
    at: e.at,
    ip: e.ip ?? null,
    userAgent: e.userAgent ?? '',
  }));
  const registeredApps = (await store.listClientsOwnedBy(user.id)).map((client) => ({
    clientId: client.clientId,
    name: client.name,
    redirectUris: client.redirectUris,
    created: client.createdAt,
  }));
  return { applications, signIns, registeredApps };
}

/**
 * Withdraws `clientId`'s access: every refresh token of the user's grants to it and their access
 * tokens, and the consent; how many grants. A client the user has neither a grant nor a consent with
 * is nobody's business: nothing is written and nothing recorded (null), so that a form naming any id
 * at all cannot fill the audit trail, or the webhooks of that client's owner, with withdrawals.
 */
export async function withdrawClient(
  store: GrantStore & SessionStore,
  input: { userId: string; clientId: string; requester: Requester; now: number },
): Promise<number | null> {
  const { userId, clientId, requester, now } = input;
  const granted = (await store.listActiveGrants(userId, now)).some((grant) => grant.clientId === clientId);
  if (!granted && (await store.getConsentedScopes(userId, clientId)).length === 0) return null;
  const withdrawn = securityEvent('consent.withdrawn', now, { userId, clientId, requester });
  return store.withdrawClient(userId, clientId, now, withdrawn);
}

/**
 * Deletes an app the user registered (RFC 7591), with every token issued to it; only its owner may.
 * False when there is no such app of theirs.
 */
export async function deleteOwnedClient(
  store: ClientStore,
  input: { userId: string; clientId: string; requester: Requester; now: number },
): Promise<boolean> {
  const { userId, requester, now } = input;
  const client = await store.getClient(input.clientId);
  if (!client || client.ownerId !== userId) return false;
  const deleted = securityEvent('client.deleted', now, { userId, clientId: client.clientId, requester });
  return store.deleteClient(client.clientId, deleted);
}
