// Clients: what the store answers about them and their Kysely code; the client (camelCase) is
// ./client.ts, and its row (./tables.ts) both ways ./client-rows.ts. Clients are read on every
// authorization and token request, so they are cached for a few seconds (./client-cache.ts); the
// client ids that are https URLs (Client ID Metadata Documents) are resolved by
// src/oauth/registration/documents.ts and never stored.
import type { ExpressionBuilder } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import type { AggregateClass } from './aggregate.ts';
import type { Client, LogoutUri } from './client.ts';
import { ClientCache } from './client-cache.ts';
import { fromClient, toClient } from './client-rows.ts';
import { columnsToSet } from './columns.ts';
import type { Database } from './tables.ts';

export type {
  Client,
  ClientDescription,
  ClientJwks,
  LogoutChannel,
  LogoutUri,
  TokenEndpointAuthMethod,
  TokenLifetimes,
} from './client.ts';
export { LOGOUT_CHANNELS, SERVER_LIFETIMES } from './client.ts';

export interface ClientStore {
  createClient(client: Client, event?: SecurityEvent): Promise<void>;
  /**
   * The client, or undefined. An app registered by a user who is disabled is none while they are (it
   * acts for them, as their webhooks do: ./users.ts setUserDisabled), unless `suspended` is asked for
   * too (the operator's CLI, which shows, changes and deletes it all the same).
   */
  getClient(clientId: string, options?: { suspended?: boolean }): Promise<Client | undefined>;
  listClients(): Promise<Client[]>;
  /** Deletes the client, revokes its grants and forgets consent to it; false when no such client exists. */
  deleteClient(clientId: string, event?: SecurityEvent): Promise<boolean>;
  /**
   * A new secret; `previous` (the old one's hash) is still accepted until its expiry (a rotation's
   * grace period), or null for none. Returns false when no such client exists.
   */
  setClientSecretHash(
    clientId: string,
    secretHash: string,
    event?: SecurityEvent,
    previous?: { hash: string; expiresAt: number } | null,
    /** client_secret_jwt: the new secret encrypted, which the server needs back. */
    secretEncrypted?: string,
  ): Promise<boolean>;
  /** Replaces what a client may change: everything but its id, secret, owner and creation time. */
  updateClient(client: Client, event?: SecurityEvent): Promise<boolean>;
  /** The clients a user registered (RFC 7591), oldest first. */
  listClientsOwnedBy(userId: string): Promise<Client[]>;
  /**
   * The front-channel logouts (Front-Channel Logout 1.0) of the clients signed in from the session
   * `sid`: those with a frontchannel_logout_uri and a grant from it.
   */
  listFrontchannelLogouts(sid: string): Promise<Array<LogoutUri & { clientId: string }>>;
}

/** Clients: the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withClients<Base extends AggregateClass>(Base: Base) {
  abstract class Clients extends Base implements ClientStore {
    readonly #cache = new ClientCache<Client>();
    #documents: ((clientId: string) => Promise<Client>) | undefined;

    async createClient(client: Client, event?: SecurityEvent): Promise<void> {
      this.#cache.forget(client.clientId);
      await this.write(this.db.insertInto('clients').values(fromClient(client)), ...this.events(event));
    }

    /**
     * Resolves the client ids that are https URLs (Client ID Metadata Documents,
     * src/oauth/registration/documents.ts); without it they are looked up like any other id.
     */
    resolveClientUrlsWith(resolver: ((clientId: string) => Promise<Client>) | undefined): void {
      this.#documents = resolver;
    }

    /** The cache's loader, made once: a client is read on every token request. */
    readonly #load = (clientId: string) => this.#read(clientId, false);

    getClient(clientId: string, options?: { suspended?: boolean }): Promise<Client | undefined> {
      // Tessera's own ids never start with https:// (../tokens/opaque.ts newId).
      if (this.#documents && clientId.startsWith('https://')) return this.#documents(clientId);
      if (options?.suspended) return this.#read(clientId, true);
      return this.#cache.get(clientId, this.#load);
    }

    async #read(clientId: string, suspended: boolean): Promise<Client | undefined> {
      let query = this.db.selectFrom('clients').selectAll().where('client_id', '=', clientId);
      if (!suspended) {
        const disabledOwner = (eb: ExpressionBuilder<Database, 'clients'>) =>
          eb.exists(
            eb
              .selectFrom('users as o')
              .select('o.id')
              .whereRef('o.id', '=', 'clients.owner_id')
              .where('o.disabled', '=', 1),
          );
        query = query.where((eb) => eb.not(disabledOwner(eb)));
      }
      const row = await query.executeTakeFirst();
      return row && toClient(row);
    }

    /** Forgets the cached clients, after changes made behind this store's back. */
    clearClientCache(): void {
      this.#cache.clear();
    }

    async listClients(): Promise<Client[]> {
      const rows = await this.db.selectFrom('clients').selectAll().orderBy('created_at').orderBy('client_id').execute();
      return rows.map(toClient);
    }

    async deleteClient(clientId: string, event?: SecurityEvent): Promise<boolean> {
      this.#cache.forget(clientId);
      const now = event?.at ?? Math.floor(Date.now() / 1000);
      const deleted = this.db.deleteFrom('clients').where('client_id', '=', clientId);
      // Its tokens end with it: the access tokens too, which are checked against their grant.
      const live = (eb: ExpressionBuilder<Database, 'grants'>) => eb.and({ client_id: clientId, revoked_at: null });
      const revoked = this.db.updateTable('grants').set({ revoked_at: now }).where(live);
      const consents = this.db.deleteFrom('consents').where('client_id', '=', clientId);
      const connections = this.db.deleteFrom('connections').where('client_id', '=', clientId);
      return this.changeOne(event, deleted, revoked, consents, connections);
    }

    async setClientSecretHash(
      clientId: string,
      secretHash: string,
      event?: SecurityEvent,
      previous: { hash: string; expiresAt: number } | null = null,
      secretEncrypted?: string,
    ): Promise<boolean> {
      this.#cache.forget(clientId);
      const set = {
        secret_hash: secretHash,
        previous_secret_hash: previous?.hash ?? null,
        previous_secret_expires_at: previous?.expiresAt ?? null,
        ...(secretEncrypted === undefined ? {} : { secret_enc: secretEncrypted }),
      };
      const updated = this.db.updateTable('clients').set(set).where('client_id', '=', clientId);
      return this.changeOne(event, updated);
    }

    async updateClient(client: Client, event?: SecurityEvent): Promise<boolean> {
      this.#cache.forget(client.clientId);
      // Its id, owner, origin and creation time stay.
      const set = columnsToSet(fromClient(client), ['client_id', 'owner_id', 'created_at', 'registered_via']);
      const updated = this.db.updateTable('clients').set(set).where('client_id', '=', client.clientId);
      return this.changeOne(event, updated);
    }

    async listClientsOwnedBy(userId: string): Promise<Client[]> {
      const owned = this.db.selectFrom('clients').selectAll().where('owner_id', '=', userId);
      return (await owned.orderBy('created_at').orderBy('client_id').execute()).map(toClient);
    }

    async listFrontchannelLogouts(sid: string): Promise<Array<LogoutUri & { clientId: string }>> {
      const rows = await this.db
        .selectFrom('clients as c')
        .select(['c.client_id', 'c.frontchannel_logout_uri', 'c.frontchannel_logout_session_required'])
        .where('c.frontchannel_logout_uri', 'is not', null)
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom('grants as g')
              .select('g.id')
              .where('g.sid', '=', sid)
              .whereRef('g.client_id', '=', 'c.client_id'),
          ),
        )
        .orderBy('c.client_id')
        .execute();
      return rows.map((row) => ({
        clientId: row.client_id,
        uri: row.frontchannel_logout_uri!,
        sessionRequired: Number(row.frontchannel_logout_session_required) === 1,
      }));
    }
  }
  return Clients;
}
