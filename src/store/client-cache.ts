// Clients (and APIs, RFC 8707) are read on every authorization and token request and change rarely,
// so each store keeps them for a few seconds. An instance's own changes apply at once; another
// instance's (or the CLI's) within CLIENT_CACHE_TTL.
export const CLIENT_CACHE_TTL = 5_000;
const CLIENT_CACHE_MAX = 10_000;

export class ClientCache<T> {
  readonly #entries = new Map<string, { value: T; until: number }>();

  async get(id: string, load: (id: string) => Promise<T | undefined>): Promise<T | undefined> {
    const now = Date.now();
    const cached = this.#entries.get(id);
    if (cached && cached.until > now) return cached.value;
    const value = await load(id);
    // Unknown ids are not cached: a flood of made-up ids must not grow the map.
    if (value) {
      if (this.#entries.size >= CLIENT_CACHE_MAX) this.#entries.clear();
      this.#entries.set(id, { value, until: now + CLIENT_CACHE_TTL });
    } else {
      this.#entries.delete(id);
    }
    return value;
  }

  forget(clientId: string): void {
    this.#entries.delete(clientId);
  }

  clear(): void {
    this.#entries.clear();
  }
}
