// Connections (ID-JAG, src/oauth/grants/id-jag.ts): the operator's policy under which a client may
// ask Tessera for an identity assertion for another authorization server. One per client and
// audience; read by a token exchange that asks for an ID-JAG, and by the CLI.
import type { SecurityEvent } from '../events/index.ts';
import type { AggregateClass } from './aggregate.ts';
import { columnsToSet, renamed, someColumns, splitScope } from './columns.ts';
import { insertEventsWhen } from './outbox.ts';
import type { ConnectionRow } from './tables.ts';

export interface Connection {
  id: string;
  /** Tessera's client that may ask. */
  clientId: string;
  /** The other authorization server's issuer: the ID-JAG's `aud`. */
  audience: string;
  /** The client's id at that server: the ID-JAG's `client_id`. */
  remoteClientId: string;
  /** The scopes at that server the client may ask for. */
  scopes: string[];
  /** The resource at that server the assertions are for (RFC 8707), or null for any. */
  resource: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface ConnectionStore {
  /** False when the client has a connection to that audience already. */
  createConnection(connection: Connection, event?: SecurityEvent): Promise<boolean>;
  getConnection(id: string): Promise<Connection | undefined>;
  /** The client's connection to `audience`, or undefined. */
  findConnection(clientId: string, audience: string): Promise<Connection | undefined>;
  /** Every connection, or a client's, by client and audience. */
  listConnections(clientId?: string): Promise<Connection[]>;
  /** Replaces its remote client id, scopes and resource; false when there is none. */
  updateConnection(connection: Connection, event?: SecurityEvent): Promise<boolean>;
  deleteConnection(id: string, event?: SecurityEvent): Promise<boolean>;
}

const connectionRows = renamed(
  someColumns<ConnectionRow>()('id client_id audience remote_client_id resource created_at updated_at'),
);

function toConnection(row: ConnectionRow): Connection {
  const named = connectionRows.to(row);
  return {
    ...named,
    scopes: splitScope(row.scope),
    createdAt: Number(named.createdAt),
    updatedAt: Number(named.updatedAt),
  };
}

function fromConnection(connection: Connection): ConnectionRow {
  return { ...connectionRows.from(connection), scope: connection.scopes.join(' ') };
}

/** ID-JAG connections: the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withConnections<Base extends AggregateClass>(Base: Base) {
  abstract class Connections extends Base implements ConnectionStore {
    async createConnection(connection: Connection, event?: SecurityEvent): Promise<boolean> {
      const insert = this.db
        .insertInto('connections')
        .values(fromConnection(connection))
        .onConflict((oc) => oc.columns(['client_id', 'audience']).doNothing());
      // The event only with the row: of two creations at once, one records it.
      const made = this.db.selectFrom('connections').select('id').where('id', '=', connection.id);
      return (await this.write(insert, ...(event ? insertEventsWhen(this.db, event, made) : []))) === 1;
    }

    async getConnection(id: string): Promise<Connection | undefined> {
      const row = await this.rowWith('connections', { id });
      return row && toConnection(row);
    }

    async findConnection(clientId: string, audience: string): Promise<Connection | undefined> {
      const row = await this.rowWith('connections', { client_id: clientId, audience });
      return row && toConnection(row);
    }

    async listConnections(clientId?: string): Promise<Connection[]> {
      let query = this.db.selectFrom('connections').selectAll();
      if (clientId !== undefined) query = query.where('client_id', '=', clientId);
      return (await query.orderBy('client_id').orderBy('audience').execute()).map(toConnection);
    }

    async updateConnection(connection: Connection, event?: SecurityEvent): Promise<boolean> {
      // Its id, client, audience and creation time stay.
      const set = columnsToSet(fromConnection(connection), ['id', 'client_id', 'audience', 'created_at']);
      const updated = this.db.updateTable('connections').set(set).where('id', '=', connection.id);
      return this.changeOne(event, updated);
    }

    async deleteConnection(id: string, event?: SecurityEvent): Promise<boolean> {
      const deleted = this.db.deleteFrom('connections').where('id', '=', id);
      return this.changeOne(event, deleted);
    }
  }
  return Connections;
}
