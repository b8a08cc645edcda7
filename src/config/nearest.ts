// Naming what a misspelled name probably meant: a setting (./index.ts), an event type (the CLI's
// --events and --type).

/** Edit distance (Levenshtein). */
export function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The known name closest to `name`, if it is close enough to be what was meant. */
export function nearest(name: string, known: readonly string[]): string | undefined {
  const [closest] = known.map((k) => [k, distance(name, k)] as const).sort((x, y) => x[1] - y[1]);
  return closest && closest[1] <= Math.max(3, Math.floor(name.length / 4)) ? closest[0] : undefined;
}
