// `tessera export` and `tessera import`: a deployment's users, clients, resources, consents and
// webhooks (and, on request, its signing keys and audit trail) as JSON lines, to move it between
// SQLite and PostgreSQL or between machines with every `sub` and `client_id` kept
// (src/store/transfer/). The file holds password hashes and values encrypted under TESSERA_SECRET:
// `--output` writes it owner-only.
import { closeSync, createReadStream, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Config } from '../../config/index.ts';
import { resolveSecret } from '../../config/secret.ts';
import { openDatabase } from '../../store/index.ts';
import { migrations } from '../../store/migrations/index.ts';
import { exportDatabase } from '../../store/transfer/export.ts';
import { importDatabase } from '../../store/transfer/import.ts';
import type { Include } from '../../store/transfer/tables.ts';
import { decryptAtRest } from '../../tokens/at-rest.ts';
import { createOwnerOnly, type Io, parse } from './common.ts';

export async function exportCommand(config: Config, args: string[], io: Io): Promise<number> {
  const { values } = parse(args, {
    output: { type: 'string', short: 'o' },
    'include-keys': { type: 'boolean' },
    'include-events': { type: 'boolean' },
  });
  const include = new Set<Include>();
  if (values['include-keys']) include.add('keys');
  if (values['include-events']) include.add('events');
  const fd = values.output === undefined ? undefined : createOwnerOnly(values.output);
  const write = fd === undefined ? io.out : (line: string) => writeSync(fd, `${line}\n`);
  const db = openDatabase(config.databaseUrl);
  try {
    const counts = await exportDatabase(db, { include, now: new Date() }, write);
    const summary = Object.entries(counts).map(([table, n]) => `${table} ${n}`);
    io.err(`exported: ${summary.join(', ')}${fd === undefined ? '' : ` to ${values.output}`}`);
    return 0;
  } finally {
    if (fd !== undefined) closeSync(fd);
    await db.destroy();
  }
}

export async function importCommand(config: Config, args: string[], io: Io): Promise<number> {
  const { values } = parse(args, { input: { type: 'string', short: 'i' } });
  const secrets = await resolveSecret(config);
  const lines: AsyncIterable<string> | Iterable<string> =
    values.input !== undefined
      ? createInterface({ input: createReadStream(values.input), crlfDelay: Infinity })
      : io.stdinLines
        ? io.stdinLines()
        : (await io.stdin()).split('\n').filter((line, i, all) => line !== '' || i < all.length - 1);
  const db = openDatabase(config.databaseUrl);
  try {
    const counts = await importDatabase(db, toAsync(lines), {
      migrations: Object.keys(migrations),
      opens: (column, value) => decryptAtRest(secrets, column.purpose, value) !== undefined,
    });
    io.out(
      `imported: ${Object.entries(counts)
        .map(([table, n]) => `${table} ${n}`)
        .join(', ')}`,
    );
    return 0;
  } finally {
    await db.destroy();
  }
}

async function* toAsync(lines: AsyncIterable<string> | Iterable<string>): AsyncGenerator<string> {
  for await (const line of lines) yield line;
}
