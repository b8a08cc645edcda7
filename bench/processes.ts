// The benchmark's processes: servers spawned as `npm start` spawns Tessera, stopped however the
// benchmark ends, and the CPU they (and PostgreSQL) use, read from /proc.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN_URL } from '../test/store/databases.ts';

// On one host a Unix socket is how Tessera would reach PostgreSQL: each query and its answer cost
// the kernel less than over TCP on loopback (bench/RESULTS.md, item 22).
const PG_SOCKET = '/var/run/postgresql/.s.PGSQL.5432';
export const PG_URL =
  process.env.BENCH_PG_URL ??
  (existsSync(PG_SOCKET) && !process.env.TEST_DATABASE_URL
    ? 'postgres://postgres@localhost/test?host=/var/run/postgresql'
    : ADMIN_URL);
const pgAddress = new URL(PG_URL);
/** Whether tessera-pg's PostgreSQL runs on this machine (a Unix socket or loopback): its CPU is then measured. */
export const PG_LOCAL =
  pgAddress.searchParams.get('host')?.startsWith('/') === true ||
  ['localhost', '127.0.0.1', '[::1]'].includes(pgAddress.hostname);

/** CPU time (user + system, all threads) a process has used so far, in ms, from /proc. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  // utime and stime are fields 14 and 15 of stat(5), counted in clock ticks (100 per second here).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU time of every PostgreSQL process on this machine (its backends, WAL writer, checkpointer), in
 * ms, from /proc: for tessera-pg the database's own share of the work. Undefined when none runs here.
 */
export function postgresCpuMs(): number | undefined {
  let total: number | undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      total = (total ?? 0) + cpuMs(Number(entry));
    } catch {
      /* the process ended */
    }
  }
  return total;
}

export async function waitForLine(child: ChildProcess, pattern: RegExp, what: string): Promise<void> {
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (pattern.test(output)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}):\n${output}`)));
  });
}

/** Waits until `url`/readyz answers 200 (Tessera's start banner is a log line, silent at LOG_LEVEL=warn). */
export async function waitForReady(child: ChildProcess, url: string, what: string): Promise<void> {
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}):\n${output}`);
    const status = await fetch(`${url}/readyz`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`${what} was not ready within 60 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// Servers must not outlive the benchmark, however it ends (an error, Ctrl-C, a closed pipe).
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => process.exit(130));

// Tessera runs as `npm start` runs it: the same Node.js flags and entry point (package.json).
export const START_ARGS = (
  JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }
).scripts.start
  .split(' ')
  .slice(1);

export function spawnServer(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

export function stopper(child: ChildProcess): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null) return;
    child.kill('SIGTERM');
    await Promise.race([
      new Promise((resolve) => child.once('exit', resolve)),
      sleep(5000).then(() => child.kill('SIGKILL')),
    ]);
  };
}
