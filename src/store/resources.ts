// APIs registered by the operator (RFC 8707): what the store answers about them, the resource and
// its row both ways, and their Kysely code. Read on token requests that name one, so cached for a few
// seconds as clients are (./client-cache.ts).
import type { SecurityEvent } from '../events/index.ts';
import type { AggregateClass } from './aggregate.ts';
import { ClientCache } from './client-cache.ts';
import { splitScope } from './columns.ts';
import type { ResourceRow } from './tables.ts';

/** An API registered by the operator (RFC 8707): tokens for it carry `aud` = uri and only the scopes it accepts. */
export interface Resource {
  uri: string;
  name: string;
  scopes: string[];
  createdAt: number;
}

/** The APIs access tokens may be asked for (RFC 8707 `resource`). */
export interface ResourceStore {
  createResource(resource: Resource, event?: SecurityEvent): Promise<void>;
  /** Cached for a few seconds, as clients are. */
  getResource(uri: string): Promise<Resource | undefined>;
  listResources(): Promise<Resource[]>;
  deleteResource(uri: string, event?: SecurityEvent): Promise<boolean>;
  /** Replaces its name and scopes; false when there is none. */
  updateResource(resource: Resource, event?: SecurityEvent): Promise<boolean>;
}

function toResource(row: ResourceRow): Resource {
  return { uri: row.uri, name: row.name, scopes: splitScope(row.scope), createdAt: Number(row.created_at) };
}

function fromResource(resource: Resource): ResourceRow {
  return { uri: resource.uri, name: resource.name, scope: resource.scopes.join(' '), created_at: resource.createdAt };
}

/** APIs (RFC 8707): the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withResources<Base extends AggregateClass>(Base: Base) {
  abstract class Resources extends Base implements ResourceStore {
    readonly #cache = new ClientCache<Resource>();

    async createResource(resource: Resource, event?: SecurityEvent): Promise<void> {
      this.#cache.forget(resource.uri);
      await this.write(this.db.insertInto('resources').values(fromResource(resource)), ...this.events(event));
    }

    getResource(uri: string): Promise<Resource | undefined> {
      return this.#cache.get(uri, async (id) => {
        const row = await this.db.selectFrom('resources').selectAll().where('uri', '=', id).executeTakeFirst();
        return row && toResource(row);
      });
    }

    /** Forgets the cached resources, after changes made behind this store's back. */
    clearResourceCache(): void {
      this.#cache.clear();
    }

    async listResources(): Promise<Resource[]> {
      return (await this.db.selectFrom('resources').selectAll().orderBy('uri').execute()).map(toResource);
    }

    async updateResource(resource: Resource, event?: SecurityEvent): Promise<boolean> {
      this.#cache.forget(resource.uri);
      const set = { name: resource.name, scope: resource.scopes.join(' ') };
      const updated = this.db.updateTable('resources').set(set).where('uri', '=', resource.uri);
      return this.changeOne(event, updated);
    }

    async deleteResource(uri: string, event?: SecurityEvent): Promise<boolean> {
      this.#cache.forget(uri);
      const deleted = this.db.deleteFrom('resources').where('uri', '=', uri);
      return this.changeOne(event, deleted);
    }
  }
  return Resources;
}
