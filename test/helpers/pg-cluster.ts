// A PostgreSQL cluster of a test's own (initdb on a free port, trust auth, its socket in its own
// directory), so that a test can stop, restart and kill the server under load without touching the
// machine's one. Removed, with its files, by destroy(); under CI=true its absence is a failure.
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './server.ts';

export interface PgCluster {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  adminUrl: string;
  start(): void;
  /** `pg_ctl stop -m fast`: every connection is terminated ("terminating connection due to administrator command"). */
  stop(): void;
  destroy(): void;
  /** With `archive`: pg_basebackup of the running cluster into a directory of its own; its path. */
  baseBackup(): string;
  /**
   * With `archive`: a point-in-time recovery, as docs/postgresql.md's operator makes it: the cluster
   * stopped, its data replaced by `base`, the archived WAL replayed up to the restore point `target`
   * (pg_create_restore_point), then promoted on a new timeline and started.
   */
  recoverTo(base: string, target: string): Promise<void>;
}

function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  const dir = version && join(root, version, 'bin');
  return dir && existsSync(join(dir, 'initdb')) ? dir : undefined;
}

/**
 * A new cluster, started; or undefined (with the reason printed) outside CI when PostgreSQL's binaries
 * are missing. `archive`: WAL archived into a directory of the cluster's own, for point-in-time recovery.
 */
export async function createPgCluster(settings: { archive?: boolean } = {}): Promise<PgCluster | undefined> {
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
  const archive = join(dir, 'archive');
  /** A shell command, as the cluster's owner. */
  const shell = (command: string) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', 'sh', '-c', command]] : ['sh', ['-c', command]];
    const result = spawnSync(file, argv, { encoding: 'utf8', timeout: 60_000 });
    if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.stdout}`);
  };
  if (settings.archive) {
    shell(`mkdir ${archive}`);
    appendFileSync(
      join(data, 'postgresql.conf'),
      `wal_level = replica\narchive_mode = on\narchive_command = 'cp %p ${archive}/%f'\n`,
    );
  }
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
    baseBackup: () => {
      const base = join(dir, `base-${Date.now()}`);
      run('pg_basebackup', [
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-U',
        'postgres',
        '-D',
        base,
        '-X',
        'stream',
        '-c',
        'fast',
      ]);
      return base;
    },
    recoverTo: async (base, target) => {
      // The restore point's WAL archived first: the segment switched out and copied by the archiver.
      const admin = new pg.Client({ connectionString: cluster.adminUrl });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ wal: string }>('select pg_walfile_name(pg_switch_wal()) as wal');
        for (const until = Date.now() + 30_000; ;) {
          const archived = await admin.query<{ last: string | null }>(
            'select last_archived_wal as last from pg_stat_archiver',
          );
          if ((archived.rows[0]?.last ?? '') >= rows[0]!.wal) break;
          if (Date.now() > until) throw new Error(`WAL ${rows[0]!.wal} was not archived`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      } finally {
        await admin.end();
      }
      cluster.stop();
      shell(`rm -rf ${data} && cp -a ${base} ${data} && touch ${data}/recovery.signal`);
      appendFileSync(
        join(data, 'postgresql.auto.conf'),
        `restore_command = 'cp ${archive}/%f %p'\nrecovery_target_name = '${target}'\n` +
          `recovery_target_action = 'promote'\n`,
      );
      cluster.start();
      const client = new pg.Client({ connectionString: cluster.adminUrl });
      await client.connect();
      try {
        for (const until = Date.now() + 30_000; ;) {
          const { rows } = await client.query<{ recovering: boolean }>('select pg_is_in_recovery() as recovering');
          if (!rows[0]!.recovering) break;
          if (Date.now() > until) throw new Error('the recovered cluster was not promoted');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      } finally {
        await client.end();
      }
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
