// A backup of a PostgreSQL database: pg_dump's plain SQL, to a file created owner-only, with the
// mark appended that makes a start on the restored database fence it (../restores.ts). pg_dump is
// given the address as --dbname without its password, and the password as PGPASSWORD: no shell
// reads the URL (an `&` in it stays in it), and no other user sees the password in `ps`.
import { spawn } from 'node:child_process';
import { closeSync, fsyncSync, openSync, rmSync, writeSync } from 'node:fs';
import pg from 'pg';
import { type BackupMark, NOT_MIGRATED } from '../backup-mark.ts';

/** The schema Tessera's tables are in, or undefined when the mark's table is missing. */
async function markSchema(databaseUrl: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ schema: string }>(
      `select table_schema as schema from information_schema.tables
        where table_name = 'restore_fences' and table_schema = current_schema()`,
    );
    return rows[0]?.schema;
  } finally {
    await client.end();
  }
}

/**
 * The URL without its password (in the user info or as a parameter), and the password. Taken apart
 * as text, not with WHATWG URL, which refuses libpq's `postgres://user@/db?host=/run/postgresql` and
 * would write the query again in its own encoding.
 */
export function splitPassword(databaseUrl: string): { url: string; password: string | undefined } {
  const match = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^?#]*)(?:\?([^#]*))?$/.exec(databaseUrl);
  if (!match) throw new Error('DATABASE_URL: expected postgres://…');
  const [, scheme, userInfo, rest, query] = match as unknown as [string, string, string | undefined, string, string?];
  let password: string | undefined;
  let user = userInfo;
  const colon = userInfo?.indexOf(':') ?? -1;
  if (userInfo !== undefined && colon >= 0) {
    password = decodeURIComponent(userInfo.slice(colon + 1));
    user = userInfo.slice(0, colon);
  }
  const parameters = (query ?? '').split('&').filter((p) => p !== '');
  const kept = parameters.filter((p) => !p.startsWith('password='));
  const given = parameters.find((p) => p.startsWith('password='));
  if (given !== undefined) password = decodeURIComponent(given.slice('password='.length));
  const auth = user === undefined || user === '' ? '' : `${user}@`;
  return { url: `${scheme}${auth}${rest}${kept.length > 0 ? `?${kept.join('&')}` : ''}`, password };
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;
const quoteLiteral = (value: string) => `'${value.replace(/'/g, "''")}'`;

export async function backupPostgres(databaseUrl: string, output: string, mark: BackupMark): Promise<void> {
  const schema = await markSchema(databaseUrl);
  if (schema === undefined) throw new Error(NOT_MIGRATED);
  const { url, password } = splitPassword(databaseUrl);
  const fd = openSync(output, 'wx', 0o600);
  try {
    const stderr: Buffer[] = [];
    const child = spawn('pg_dump', ['--format=plain', '--no-owner', '--no-privileges', `--dbname=${url}`], {
      env: { ...process.env, ...(password === undefined ? {} : { PGPASSWORD: password }) },
      stdio: ['ignore', fd, 'pipe'],
    });
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', (err: NodeJS.ErrnoException) =>
        reject(
          err.code === 'ENOENT'
            ? new Error("pg_dump not found: install PostgreSQL's client tools (the server's major version or newer)")
            : err,
        ),
      );
      child.once('close', resolve);
    });
    if (code !== 0) throw new Error(`pg_dump failed: ${Buffer.concat(stderr).toString('utf8').trim()}`);
    writeSync(
      fd,
      `\n-- Tessera's restore mark: the first start on a database restored from this file ends every session\n` +
        `-- and refresh token and replaces the signing keys (docs/backup.md).\n` +
        `INSERT INTO ${quoteIdent(schema)}.restore_fences (id, taken_at, fenced_at) ` +
        `VALUES (${quoteLiteral(mark.id)}, ${mark.takenAt}, NULL);\n`,
    );
    fsyncSync(fd);
    closeSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(output, { force: true });
    throw err;
  }
}
