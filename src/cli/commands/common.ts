// What every command shares: opening the migrated store, parsing arguments, formatting.
import { openSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../../config/index.ts';
import { openStore } from '../../store/index.ts';
import type { Store } from '../../store/store.ts';
import { UsageError } from '../operations.ts';

export interface Io {
  env: Record<string, string | undefined>;
  out(line: string): void;
  err(line: string): void;
  stdin(): Promise<string>;
  /** Standard input line by line, for what may be large (`tessera import`); else stdin() is split. */
  stdinLines?(): AsyncIterable<string>;
}

export class NotFound extends UsageError {
  readonly notFound = true;
}

export async function withStore(
  config: Config,
  action: (store: Store) => Promise<number>,
  onMigrated?: (applied: string[]) => void,
): Promise<number> {
  const store = await openStore(config.databaseUrl, {
    pgPreparedStatements: config.pgPreparedStatements,
    pgPoolSize: 2,
  });
  try {
    const applied = await store.migrate();
    onMigrated?.(applied);
    return await action(store);
  } finally {
    await store.close();
  }
}

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, positionals = 0) {
  const parsed = parseArgs({ args, options, strict: true, allowPositionals: positionals > 0 });
  if (parsed.positionals.length > positionals)
    throw new UsageError(`unexpected argument "${parsed.positionals[positionals]}"`);
  return parsed;
}

export function requirePositional(positionals: string[], what: string): string {
  const value = positionals[0];
  if (!value) throw new UsageError(`${what} is required`);
  return value;
}

export function requireOption<V>(value: V | undefined, option: string): V {
  if (value === undefined) throw new UsageError(`${option} is required`);
  return value;
}

export function formatTime(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString();
}

/** A listing: with --json every item described, else a line each, or `none` when there is none. */
export function printList<T>(
  io: Io,
  json: boolean | undefined,
  items: T[],
  describe: (item: T) => unknown,
  none: string,
  line: (item: T) => string,
): void {
  if (json)
    io.out(
      JSON.stringify(
        items.map((item) => describe(item)),
        null,
        2,
      ),
    );
  else if (items.length === 0) io.out(none);
  else for (const item of items) io.out(line(item));
}

/** One thing described: with --json as JSON, else a line per field, the names padded to `width`. */
export function printRecord(
  io: Io,
  json: boolean | undefined,
  described: Record<string, unknown>,
  width: number,
): void {
  if (json) io.out(JSON.stringify(described, null, 2));
  else for (const [key, value] of Object.entries(described)) io.out(`${key.padEnd(width)} ${String(value)}`);
}

/** A new file readable by its owner only; one that exists already is refused, never overwritten. */
export function createOwnerOnly(path: string): number {
  try {
    return openSync(path, 'wx', 0o600);
  } catch (err) {
    const exists = (err as NodeJS.ErrnoException).code === 'EEXIST';
    throw exists ? new UsageError(`${path} exists already: name a new file`) : err;
  }
}

/** The password from standard input, without its final newline. */
export async function readPassword(io: Io): Promise<string> {
  return (await io.stdin()).replace(/\r?\n$/, '');
}
