// The operator's connections (`tessera connections`): under which a client may ask Tessera for an
// ID-JAG (src/oauth/grants/id-jag.ts) for another authorization server, as whom it is known there,
// for which scopes and which resource. One per client and audience. Each change is an event.
import { CLI, type Requester, securityEvent } from '../events/index.ts';
import { resourceUriProblem } from '../oauth/resources.ts';
import { SCOPE_TOKEN } from '../oauth/scopes.ts';
import type { ClientStore } from '../store/clients.ts';
import { splitScope } from '../store/columns.ts';
import type { Connection, ConnectionStore } from '../store/connections.ts';
import { newId } from '../tokens/opaque.ts';
import { findClient } from './clients.ts';
import { AdminError, found, NotFoundError } from './errors.ts';

export interface ConnectionSettings {
  /** The other authorization server's issuer. */
  audience?: string | undefined;
  remoteClientId?: string | undefined;
  /** Space-separated scopes at the other server. */
  scope?: string | undefined;
  /** A resource there, or null for none. */
  resource?: string | null | undefined;
}

type Store = ConnectionStore & Pick<ClientStore, 'getClient'>;

function audienceOf(value: string): string {
  const url = URL.parse(value);
  if (!url || !['https:', 'http:'].includes(url.protocol) || url.search || url.hash || value.includes('#')) {
    throw new AdminError(`--audience: "${value}" is not an issuer (an absolute URL without query or fragment)`);
  }
  return value;
}

function scopesOf(value: string): string[] {
  const scopes = [...new Set(splitScope(value))];
  if (scopes.length === 0 || scopes.some((s) => !SCOPE_TOKEN.test(s))) {
    throw new AdminError('--scope: one or more space-separated scopes (RFC 6749 §3.3)');
  }
  return scopes;
}

function remoteClientIdOf(value: string): string {
  const id = value.trim();
  if (id === '' || id.length > 255) throw new AdminError('--remote-client-id: 1 to 255 characters');
  return id;
}

function resourceOf(value: string | null): string | null {
  const problem = value === null ? undefined : resourceUriProblem(value);
  if (problem) throw new AdminError(`--resource: "${value}" ${problem}`);
  return value;
}

const described = (c: Connection) => ({
  connection: c.id,
  audience: c.audience,
  remote_client_id: c.remoteClientId,
  scopes: c.scopes,
  ...(c.resource !== null ? { resource: c.resource } : {}),
});

export async function createConnection(
  store: Store,
  input: ConnectionSettings & { clientId: string },
  now: number,
  requester: Requester = CLI,
): Promise<Connection> {
  await findClient(store, input.clientId);
  if (input.audience === undefined) throw new AdminError('--audience is required');
  if (input.remoteClientId === undefined) throw new AdminError('--remote-client-id is required');
  if (input.scope === undefined) throw new AdminError('--scope is required');
  const connection: Connection = {
    id: newId(),
    clientId: input.clientId,
    audience: audienceOf(input.audience),
    remoteClientId: remoteClientIdOf(input.remoteClientId),
    scopes: scopesOf(input.scope),
    resource: resourceOf(input.resource ?? null),
    createdAt: now,
    updatedAt: now,
  };
  const event = securityEvent('connection.created', now, {
    clientId: connection.clientId,
    requester,
    data: described(connection),
  });
  if (!(await store.createConnection(connection, event))) {
    throw new AdminError(`client ${input.clientId} has a connection to ${connection.audience} already`);
  }
  return connection;
}

export async function showConnection(store: Store, id: string): Promise<Connection> {
  return found(await store.getConnection(id), `no connection ${id}`);
}

export function listConnections(store: Store, clientId?: string): Promise<Connection[]> {
  return store.listConnections(clientId);
}

/** Changes its remote client id, scopes or resource; its client and audience stay. */
export async function updateConnection(
  store: Store,
  id: string,
  settings: Omit<ConnectionSettings, 'audience'>,
  now: number,
  requester: Requester = CLI,
): Promise<Connection> {
  const current = await showConnection(store, id);
  const updated: Connection = {
    ...current,
    ...(settings.remoteClientId === undefined ? {} : { remoteClientId: remoteClientIdOf(settings.remoteClientId) }),
    ...(settings.scope === undefined ? {} : { scopes: scopesOf(settings.scope) }),
    ...(settings.resource === undefined ? {} : { resource: resourceOf(settings.resource) }),
    updatedAt: now,
  };
  const event = securityEvent('connection.updated', now, {
    clientId: updated.clientId,
    requester,
    data: described(updated),
  });
  if (!(await store.updateConnection(updated, event))) throw new NotFoundError(`no connection ${id}`);
  return updated;
}

export async function deleteConnection(store: Store, id: string, now: number, requester: Requester = CLI) {
  const current = await showConnection(store, id);
  const event = securityEvent('connection.deleted', now, {
    clientId: current.clientId,
    requester,
    data: described(current),
  });
  if (!(await store.deleteConnection(id, event))) throw new NotFoundError(`no connection ${id}`);
}
