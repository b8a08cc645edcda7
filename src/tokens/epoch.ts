// The restore epoch (src/store/restores.ts): the latest restore fence's id, '' before any, which codes
// and passkey challenges are sealed in, so that none sealed before a restore opens after it. Fixed at
// start, or read anew when a running instance's restore watch (src/restores/watch.ts) meets a fence.

export type RestoreEpoch = string | (() => string);

/** What `make` builds for the epoch now, built again only when the epoch has changed (a string compare). */
export function perEpoch<T>(epoch: RestoreEpoch, make: (epoch: string) => T): () => T {
  const read = typeof epoch === 'string' ? () => epoch : epoch;
  let current = read();
  let value = make(current);
  return () => {
    const now = read();
    if (now !== current) {
      current = now;
      value = make(now);
    }
    return value;
  };
}
