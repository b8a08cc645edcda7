// A PostgreSQL cluster of a test's own (initdb on a free port, trust auth, its socket in its own
// directory), so that a test can stop, restart and kill the server under load without touching the
// machine's one. Removed, with its files, by destroy(); under CI=true its absence is a failure.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './server.ts';

export interface PgCluster {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  adminUrl: string;
  start(): void;
  /** `pg_ctl stop -m fast`: every connection is terminated ("terminating connection due to administrator command"). */
  stop(): void;
  destroy(): void;
}

function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  const dir = version && join(root, version, 'bin');
  return dir && existsSync(join(dir, 'initdb')) ? dir : undefined;
}

/** A new cluster, started; or undefined (with the reason printed) outside CI when PostgreSQL's binaries are missing. */
export async function createPgCluster(): Promise<PgCluster | undefined> {
  const bin = binDir();
  if (!bin) {
    if (process.env.CI === 'true') throw new Error('PostgreSQL binaries (initdb) are required under CI');
    console.warn('skipping: no PostgreSQL binaries under /usr/lib/postgresql');
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'tessera-pg-'));
  const data = join(dir, 'data');
  // initdb and postgres refuse to run as root: then they run as the postgres user, who owns the directory.
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, id('-u'), id('-g'));
  }
  const run = (command: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]]
      : [join(bin, command), args];
    const result = spawnSync(file, argv, { encoding: 'utf8', timeout: 60_000 });
    if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.stdout}`);
  };
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c max_connections=50`;
  const cluster: PgCluster = {
    port,
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: () => run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']),
    stop: () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']),
    destroy: () => {
      spawnSync(asRoot ? 'runuser' : join(bin, 'pg_ctl'), [
        ...(asRoot ? ['-u', 'postgres', '--', join(bin, 'pg_ctl')] : []),
        '-D',
        data,
        '-m',
        'immediate',
        'stop',
      ]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    cluster.start();
  } catch (err) {
    cluster.destroy();
    throw err;
  }
  return cluster;
}
