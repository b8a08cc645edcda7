// How often and how many at once Tessera fetches Client ID Metadata Documents (./documents.ts). Each
// authorization request may name a new https client_id, so without limits anyone could make Tessera
// request any URL on the internet as fast as they send requests: a scanner, or a flood aimed at one
// host. Fetches are limited per host of the client_id URL and in total, both in concurrency and in
// rate (a sliding minute), per instance. A fetch over a limit is not made, and the request fails as
// any fetch failure does.

export interface FetchLimitsPolicy {
  /** Fetches under way at once, in all and to one host. */
  concurrent: number;
  concurrentPerHost: number;
  /** Fetches begun in the last minute, in all and to one host. */
  perMinute: number;
  perMinutePerHost: number;
}

export const DOCUMENT_FETCH_LIMITS: FetchLimitsPolicy = {
  concurrent: 32,
  concurrentPerHost: 4,
  perMinute: 300,
  perMinutePerHost: 30,
};

const MINUTE_MS = 60_000;
/** Hosts remembered before the quiet ones are forgotten. */
const HOSTS = 1_000;

export class FetchLimits {
  readonly #policy: FetchLimitsPolicy;
  #active = 0;
  readonly #activeByHost = new Map<string, number>();
  /** Start times (ms) of the last minute's fetches, oldest first. */
  #recent: number[] = [];
  readonly #recentByHost = new Map<string, number[]>();

  constructor(policy: FetchLimitsPolicy = DOCUMENT_FETCH_LIMITS) {
    this.#policy = policy;
  }

  /** Begins a fetch to `host`: the function that ends it, or the limit that refuses it. */
  begin(host: string, nowMs: number): { end: () => void } | { refused: string } {
    const since = nowMs - MINUTE_MS;
    this.#recent = this.#recent.filter((t) => t > since);
    const recentHere = (this.#recentByHost.get(host) ?? []).filter((t) => t > since);
    const activeHere = this.#activeByHost.get(host) ?? 0;
    const refused =
      this.#active >= this.#policy.concurrent
        ? 'fetches under way'
        : activeHere >= this.#policy.concurrentPerHost
          ? 'fetches under way to this host'
          : this.#recent.length >= this.#policy.perMinute
            ? 'fetches in the last minute'
            : recentHere.length >= this.#policy.perMinutePerHost
              ? 'fetches to this host in the last minute'
              : undefined;
    if (refused) return { refused: `too many ${refused}` };
    this.#forgetQuietHosts(since);
    this.#active++;
    this.#activeByHost.set(host, activeHere + 1);
    this.#recent.push(nowMs);
    recentHere.push(nowMs);
    this.#recentByHost.set(host, recentHere);
    let ended = false;
    return {
      end: () => {
        if (ended) return;
        ended = true;
        this.#active--;
        const left = (this.#activeByHost.get(host) ?? 1) - 1;
        if (left > 0) this.#activeByHost.set(host, left);
        else this.#activeByHost.delete(host);
      },
    };
  }

  #forgetQuietHosts(since: number): void {
    if (this.#recentByHost.size < HOSTS) return;
    for (const [host, times] of this.#recentByHost) {
      if (!times.some((t) => t > since)) this.#recentByHost.delete(host);
    }
  }
}
