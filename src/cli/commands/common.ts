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

/** `--json`: every command that shows something prints it as JSON with it. */
export const JSON_OPTION = { json: { type: 'boolean' } } as const;

/** Options that take a value, by name. */
export function strings<const N extends string>(...names: N[]) {
  return Object.fromEntries(names.map((name) => [name, { type: 'string' }])) as { [K in N]: { type: 'string' } };
}

/** Yes/no options, by name. */
export function flags<const N extends string>(...names: N[]) {
  return Object.fromEntries(names.map((name) => [name, { type: 'boolean' }])) as { [K in N]: { type: 'boolean' } };
}

/** Options that take a value and may be given again (`--redirect-uri A --redirect-uri B`), by name. */
export function repeatable<const N extends string>(...names: N[]) {
  return Object.fromEntries(names.map((name) => [name, { type: 'string', multiple: true }])) as {
    [K in N]: { type: 'string'; multiple: true };
  };
}

/** The `--no-NAME` of each name: a yes/no option that turns a setting off or removes it. */
export function negations<const N extends string>(...names: N[]) {
  return flags(...names.map((name) => `no-${name}` as const));
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

/** The one argument of a command that takes nothing else (`clients delete ID`); `what` names it if missing. */
export function onlyArgument(args: string[], what: string): string {
  return requirePositional(parse(args, {}, 1).positionals, what);
}

/** The one argument of a command that takes `--json` besides (`users sessions USERNAME [--json]`). */
export function argumentAndJson(args: string[], what: string): { argument: string; json: boolean | undefined } {
  const { values, positionals } = parse(args, JSON_OPTION, 1);
  return { argument: requirePositional(positionals, what), json: values.json };
}

/** `… delete ID`: the one `what` names removed with `remove`, and said (`deleted client abc`). */
export async function deleteOne(
  io: Io,
  args: string[],
  what: string,
  noun: string,
  remove: (argument: string) => Promise<unknown>,
): Promise<number> {
  const argument = onlyArgument(args, what);
  await remove(argument);
  io.out(`deleted ${noun} ${argument}`);
  return 0;
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

/** `… list [--json]`: every one there is, as printList prints them. */
export async function listAll<T>(
  io: Io,
  args: string[],
  all: () => Promise<T[]>,
  describe: (item: T) => unknown,
  none: string,
  line: (item: T) => string,
): Promise<number> {
  const { values } = parse(args, JSON_OPTION);
  printList(io, values.json, await all(), describe, none, line);
  return 0;
}

/**
 * One thing described: with --json as JSON, else a line per field, the names padded to `width` and
 * the items of a list joined by `separator`.
 */
export function printRecord(
  io: Io,
  json: boolean | undefined,
  described: Record<string, unknown>,
  width: number,
  separator = ',',
): void {
  if (json) io.out(JSON.stringify(described, null, 2));
  else
    for (const [key, value] of Object.entries(described))
      io.out(`${key.padEnd(width)} ${Array.isArray(value) ? value.join(separator) : String(value)}`);
}

/** `… show ID [--json]`: the one `what` names, looked up and described, as printRecord prints it. */
export async function showOne(
  io: Io,
  args: string[],
  what: string,
  describe: (argument: string) => Promise<Record<string, unknown>>,
  width: number,
  separator?: string,
): Promise<number> {
  const { argument, json } = argumentAndJson(args, what);
  printRecord(io, json, await describe(argument), width, separator);
  return 0;
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
