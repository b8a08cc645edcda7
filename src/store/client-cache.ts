// Clients are read on every authorization and token request and change rarely, so each store keeps
// them for a few seconds. An instance's own changes apply at once; another instance's (or the
// CLI's) within CLIENT_CACHE_TTL.
import type { Client } from './store.ts';

export const CLIENT_CACHE_TTL = 5_000;
const CLIENT_CACHE_MAX = 10_000;

export class ClientCache {
  readonly #entries = new Map<string, { client: Client; until: number }>();

  async get(clientId: string, load: (clientId: string) => Promise<Client | undefined>): Promise<Client | undefined> {
    const now = Date.now();
    const cached = this.#entries.get(clientId);
    if (cached && cached.until > now) return cached.client;
    const client = await load(clientId);
    // Unknown ids are not cached: a flood of made-up ids must not grow the map.
    if (client) {
      if (this.#entries.size >= CLIENT_CACHE_MAX) this.#entries.clear();
      this.#entries.set(clientId, { client, until: now + CLIENT_CACHE_TTL });
    } else {
      this.#entries.delete(clientId);
    }
    return client;
  }

  forget(clientId: string): void {
    this.#entries.delete(clientId);
  }

  clear(): void {
    this.#entries.clear();
  }
}
