// The account page's upstream providers: the accounts linked (one per provider), the providers the
// user may link besides, linking one (the provider's sign-in comes back to src/authn/upstream/step.ts,
// which calls linkToAccount of src/upstream/accounts.ts) and unlinking one, unless it is the user's
// last way in.
import { securityEvent, type Requester } from '../events/index.ts';
import { recentSignIn } from '../authn/recent.ts';
import type { BrowserSession } from '../authn/session.ts';
import { enrolledMethods, steps } from '../authn/registry.ts';
import type { EnrolmentStore } from '../authn/step.ts';
import { shortfall } from '../authn/sufficiency.ts';
import type { UpstreamStore } from '../store/upstream.ts';
import type { User } from '../store/users.ts';
import type { LinkedProviderRow } from '../ui/upstream.ts';

export type LinkedProvider = LinkedProviderRow;

export interface UpstreamOverview {
  linked: LinkedProvider[];
  /** Providers the user has no account of linked yet. */
  available: Array<{ id: string; name: string }>;
}

/** Whether the user has a way to sign in besides their links: a password, a passkey (any first step). */
async function otherFirstStep(store: EnrolmentStore, user: User): Promise<boolean> {
  const registry = steps().filter((s) => s.first);
  return (await enrolledMethods(store, user, registry)).size > 0;
}

/**
 * Whether the session's sign-in is recent enough to change how the user signs in, as linking or
 * unlinking a provider does (src/authn/recent.ts): a browser left signed in cannot be given someone
 * else's way in, nor lose its owner's.
 */
export function recentEnough(session: BrowserSession, user: User, now: number): boolean {
  return !shortfall(session, user, recentSignIn(now));
}

/** What the account page shows of the user's upstream providers. */
export async function upstreamOverview(store: UpstreamStore & EnrolmentStore, user: User): Promise<UpstreamOverview> {
  const [links, providers] = await Promise.all([store.listLinks(user.id), store.listProviders()]);
  const byId = new Map(providers.map((p) => [p.id, p]));
  const canUnlink = links.length > 1 || (await otherFirstStep(store, user));
  const linked = links.flatMap((link) => {
    const provider = byId.get(link.providerId);
    const { email, createdAt: since, lastUsedAt: lastUsed } = link;
    return provider ? [{ providerId: provider.id, name: provider.name, email, since, lastUsed, canUnlink }] : [];
  });
  const mine = new Set(links.map((l) => l.providerId));
  const available = providers.filter((p) => !mine.has(p.id)).map((p) => ({ id: p.id, name: p.name }));
  return { linked, available };
}

/**
 * Unlinks the user's account of `providerId`: `last` (and nothing changes) when it is their last way
 * in, a user without a password, a passkey or another link, who could then never sign in again;
 * `reauth` when the session's sign-in is not recent.
 */
export async function unlinkProvider(
  store: UpstreamStore & EnrolmentStore,
  input: { user: User; session: BrowserSession; providerId: string; requester: Requester; now: number },
): Promise<'unlinked' | 'last' | 'not-linked' | 'reauth'> {
  const { user, now } = input;
  if (!recentEnough(input.session, user, now)) return 'reauth';
  const links = await store.listLinks(user.id);
  const link = links.find((l) => l.providerId === input.providerId);
  if (!link) return 'not-linked';
  if (links.length === 1 && !(await otherFirstStep(store, user))) return 'last';
  const data = { provider: link.providerId, subject: link.subject };
  const event = securityEvent('user.upstream_unlinked', now, { userId: user.id, requester: input.requester, data });
  return (await store.deleteLink(link.providerId, user.id, event)) ? 'unlinked' : 'not-linked';
}
