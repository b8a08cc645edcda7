// The operator's operations on grants, as plain functions over the store (./users.ts says why).
import { CLI, type Requester, securityEvent } from '../events/index.ts';
import type { ClientStore } from '../store/clients.ts';
import type { GrantStore } from '../store/grants.ts';
import { findClient } from './clients.ts';

/**
 * The client withdrawn from every user, as each user's "withdraw" on the account page (or `grants
 * revoke --user --client`) does for one: every grant of it revoked, so its refresh tokens stop and its
 * access tokens turn inactive at introspection and userinfo, and every consent to it forgotten, so
 * each user is asked again. One event, `client.grants_revoked`, for the client (its owner's webhooks
 * hear of it), rather than one per user. The client itself stays (`clients delete` removes it).
 */
export async function revokeClientGrants(
  store: Pick<ClientStore, 'getClient'> & Pick<GrantStore, 'withdrawClientFromAll'>,
  clientId: string,
  options: { now: number; requester?: Requester },
): Promise<{ grants: number }> {
  const { now, requester = CLI } = options;
  await findClient(store, clientId);
  const event = securityEvent('client.grants_revoked', now, { clientId, requester, data: { every_user: true } });
  return { grants: await store.withdrawClientFromAll(clientId, now, event) };
}
