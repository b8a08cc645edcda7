// `tessera grants …`: list a user's grants and revoke them, or every user's grants of a client.
import { revokeClientGrants } from '../../admin/grants.ts';
import type { Config } from '../../config/index.ts';
import { CLI, securityEvent } from '../../events/index.ts';
import type { ClientStore } from '../../store/clients.ts';
import type { GrantStore } from '../../store/grants.ts';
import type { UserStore } from '../../store/users.ts';
import { UsageError } from '../operations.ts';
import { findClient } from '../../admin/clients.ts';
import { found } from '../../admin/errors.ts';
import { findUser } from '../../admin/users.ts';
import { formatTime, type Io, JSON_OPTION, parse, printList, requireOption, strings } from './common.ts';

type Stores = ClientStore & UserStore & GrantStore;

export async function grantsCommand(store: Stores, _config: Config, args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  const now = Math.floor(Date.now() / 1000);
  switch (sub) {
    case 'list': {
      const { values } = parse(rest, { ...strings('user'), ...JSON_OPTION });
      const username = requireOption(values.user, '--user');
      const user = await findUser(store, username);
      const grants = await store.listActiveGrants(user.id, now);
      const describe = ({ id, clientId, clientName, scope, createdAt }: (typeof grants)[number]) => ({
        grant_id: id,
        client_id: clientId,
        client_name: clientName,
        scope,
        created_at: formatTime(createdAt),
      });
      printList(io, values.json, grants, describe, `${username} has granted no application access`, (g) => {
        const name = (g.clientName ?? '(metadata document)').padEnd(24);
        return `${g.id}  ${g.clientId}  ${name}  ${g.scope}  ${formatTime(g.createdAt)}`;
      });
      return 0;
    }
    case 'revoke': {
      const { values, positionals } = parse(rest, strings('user', 'client'), 1);
      const grantId = positionals[0];
      if (grantId) {
        if (values.user || values.client) throw new UsageError('give either a GRANT_ID or --user with --client');
        const grant = found(await store.getGrant(grantId), `no grant ${grantId}`);
        const revoked = securityEvent('token.revoked', now, {
          userId: grant.userId,
          clientId: grant.clientId,
          requester: CLI,
          data: { token: 'refresh_token', grant: grantId },
        });
        await store.revokeGrant(grantId, now, revoked);
        io.out(`revoked grant ${grantId}: its refresh tokens no longer work and its access tokens are inactive`);
        return 0;
      }
      const clientId = requireOption(values.client, '--client (or a GRANT_ID)');
      if (values.user === undefined) {
        // Every user's grants of the client: its refresh tokens stop, every user is asked to consent again.
        const { grants } = await revokeClientGrants(store, clientId, { now });
        io.out(`revoked ${grants} grant(s) of client ${clientId}, of every user, and forgot their consents`);
        return 0;
      }
      const username = values.user;
      const user = await findUser(store, username);
      await findClient(store, clientId);
      const withdrawn = securityEvent('consent.withdrawn', now, { userId: user.id, clientId, requester: CLI });
      const count = await store.withdrawClient(user.id, clientId, now, withdrawn);
      io.out(`revoked ${count} grant(s) of ${username} for client ${clientId}, and forgot the consent`);
      return 0;
    }
    default:
      throw new UsageError(sub ? `unknown grants command "${sub}"` : 'grants needs a command: list, revoke');
  }
}
