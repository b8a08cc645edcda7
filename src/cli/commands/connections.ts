// `tessera connections …`: the policies under which a client may ask for an ID-JAG for another
// authorization server (src/admin/connections.ts, docs/agents.md).
import {
  createConnection,
  deleteConnection,
  listConnections,
  showConnection,
  updateConnection,
} from '../../admin/connections.ts';
import type { Config } from '../../config/index.ts';
import type { Store } from '../../store/store.ts';
import type { Connection } from '../../store/connections.ts';
import { UsageError } from '../operations.ts';
import {
  deleteOne,
  formatTime,
  type Io,
  JSON_OPTION,
  negations,
  parse,
  printList,
  requirePositional,
  showOne,
  strings,
} from './common.ts';

function describe(connection: Connection): Record<string, unknown> {
  return {
    id: connection.id,
    client_id: connection.clientId,
    audience: connection.audience,
    remote_client_id: connection.remoteClientId,
    scope: connection.scopes.join(' '),
    resource: connection.resource,
    created_at: formatTime(connection.createdAt),
    updated_at: formatTime(connection.updatedAt),
  };
}

const SETTINGS = { ...strings('remote-client-id', 'scope', 'resource'), ...JSON_OPTION };

export async function connectionsCommand(store: Store, _config: Config, args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  const now = Math.floor(Date.now() / 1000);
  switch (sub) {
    case 'create': {
      const { values } = parse(rest, { ...strings('client', 'audience'), ...SETTINGS });
      if (values.client === undefined) throw new UsageError('--client is required');
      const connection = await createConnection(
        store,
        {
          clientId: values.client,
          audience: values.audience,
          remoteClientId: values['remote-client-id'],
          scope: values.scope,
          resource: values.resource ?? null,
        },
        now,
      );
      if (values.json) io.out(JSON.stringify(describe(connection), null, 2));
      else io.out(`created connection ${connection.id}: ${connection.clientId} → ${connection.audience}`);
      return 0;
    }
    case 'list': {
      const { values } = parse(rest, { ...strings('client'), ...JSON_OPTION });
      printList(io, values.json, await listConnections(store, values.client), describe, 'no connections', (c) => {
        return `${c.id}  ${c.clientId}  ${c.audience}  ${c.remoteClientId}  ${c.scopes.join(' ')}`;
      });
      return 0;
    }
    case 'show':
      return showOne(io, rest, 'the connection id', async (id) => describe(await showConnection(store, id)), 16);
    case 'update': {
      const { values, positionals } = parse(rest, { ...SETTINGS, ...negations('resource') }, 1);
      const id = requirePositional(positionals, 'the connection id');
      if (values.resource !== undefined && values['no-resource']) {
        throw new UsageError('--resource and --no-resource contradict each other');
      }
      const settings = {
        remoteClientId: values['remote-client-id'],
        scope: values.scope,
        resource: values['no-resource'] ? null : values.resource,
      };
      const connection = await updateConnection(store, id, settings, now);
      if (values.json) io.out(JSON.stringify(describe(connection), null, 2));
      else io.out(`updated connection ${connection.id}: ${connection.clientId} → ${connection.audience}`);
      return 0;
    }
    case 'delete':
      return deleteOne(io, rest, 'the connection id', 'connection', (id) => deleteConnection(store, id, now));
    default:
      throw new UsageError(
        sub
          ? `unknown connections command "${sub}"`
          : 'connections needs a command: create, list, show, update, delete',
      );
  }
}
