// npm run bench: Tessera against node-oidc-provider on loopback, identical workloads, one after the
// other in one run. Options (environment):
//   BENCH_SECONDS (10)  BENCH_WARMUP (3)  BENCH_USERS (16)  BENCH_ALGS (ES256,RS256)
//   BENCH_SERVERS (tessera,peer,tessera-pg; also tessera-full: SQLite pre-filled for the scale test)
//   BENCH_WORKLOADS (returning,refresh,userinfo,first-time)
//   BENCH_SEED_USERS (100000) / BENCH_SEED_REFRESH_TOKENS (1000000): what tessera-full is filled with
//   BENCH_JSON: write the results to this file as well
//   BENCH_RSS_EVERY (0): print the server's RSS every so many seconds (the 5-minute memory test)
//   BENCH_ROUNDS (1): measure each workload this many times against every server, in alternating
//     order, and give the median of the rounds' ratios (the machine's speed drifts between runs)
//   BENCH_PG_URL: the PostgreSQL server tessera-pg creates its database on; by default its Unix
//     socket in /var/run/postgresql when there is one (PostgreSQL on the same host), else
//     TEST_DATABASE_URL or 127.0.0.1:5432
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/helpers/server.ts';
import { withPostgresDatabase } from '../test/store/databases.ts';
import { drive, Http, type Measurement, type Target, VirtualUser } from './load.ts';
import { cpuMs, PG_LOCAL, PG_URL, postgresCpuMs, spawnServer, START_ARGS, stopper } from './processes.ts';
import { waitForLine, waitForReady } from './processes.ts';
import { seedTessera } from './seed.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const USERS = Number(process.env.BENCH_USERS ?? 16);
const ALGS = (process.env.BENCH_ALGS ?? 'ES256,RS256').split(',') as Array<'RS256' | 'ES256'>;
const SERVERS = (process.env.BENCH_SERVERS ?? 'tessera,peer,tessera-pg').split(',');
const WORKLOADS = (process.env.BENCH_WORKLOADS ?? 'returning,refresh,userinfo,first-time').split(',');
const RSS_EVERY = Number(process.env.BENCH_RSS_EVERY ?? 0);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error('BENCH_ROUNDS: expected a positive integer');
const API_SCOPE = 'openid profile email apps webhooks';

interface Running {
  target: Target;
  child: ChildProcess;
  stop(): Promise<void>;
  users: Array<{ username: string; password: string }>;
}

/** Peak resident set size of a process while `work` runs, sampled from /proc, and the CPU it used. */
async function withPeakRss<T>(
  pid: number,
  work: () => Promise<T>,
): Promise<{ result: T; peakRssMiB: number; startRssMiB: number; endRssMiB: number; cpuMs: number }> {
  let peak = 0;
  let last = 0;
  const sample = () => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      last = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      peak = Math.max(peak, last);
    } catch {
      /* the process ended */
    }
  };
  sample();
  const start = last;
  const cpuStart = cpuMs(pid);
  const began = Date.now();
  let reported = 0;
  const timer = setInterval(() => {
    sample();
    // BENCH_RSS_EVERY=s prints the RSS every s seconds: the memory test's trace.
    const seconds = Math.floor((Date.now() - began) / 1000);
    if (RSS_EVERY > 0 && seconds >= reported + RSS_EVERY) {
      reported = seconds - (seconds % RSS_EVERY);
      console.log(`  ${String(reported).padStart(4)} s  RSS ${Math.round(last / 1024)} MiB`);
    }
  }, 200);
  try {
    const result = await work();
    sample();
    const mib = (kib: number) => Math.round(kib / 1024);
    return {
      result,
      peakRssMiB: mib(peak),
      startRssMiB: mib(start),
      endRssMiB: mib(last),
      cpuMs: cpuMs(pid) - cpuStart,
    };
  } finally {
    clearInterval(timer);
  }
}

async function startTessera(
  alg: 'RS256' | 'ES256',
  databaseUrl: string,
  dir: string,
  fill = { users: 0, refreshTokens: 0 },
): Promise<Running> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const secret = randomBytes(32).toString('base64url');
  const redirectUri = 'http://127.0.0.1:9/callback';
  const seeded = await seedTessera({
    databaseUrl,
    issuer,
    secret,
    redirectUri,
    users: USERS,
    extraUsers: fill.users,
    extraRefreshTokens: fill.refreshTokens,
  });
  // BENCH_PROFILE=dir writes a CPU profile of the Tessera process there (node --cpu-prof).
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE] : [];
  const child = spawnServer([...profile, ...START_ARGS], {
    PATH: process.env.PATH,
    NODE_ENV: 'development',
    TESSERA_DEMO: 'false',
    LOG_LEVEL: 'warn',
    TESSERA_ISSUER: issuer,
    DATABASE_URL: databaseUrl,
    TESSERA_SECRET: secret,
    TESSERA_DATA_DIR: dir,
    TESSERA_SIGNING_ALG: alg,
  });
  await waitForReady(child, issuer, 'Tessera');
  return {
    target: {
      name: 'tessera',
      origin: issuer,
      clientId: seeded.clientId,
      clientSecret: seeded.clientSecret,
      redirectUri,
    },
    child,
    stop: stopper(child),
    users: seeded.users,
  };
}

async function startPeer(alg: 'RS256' | 'ES256'): Promise<Running> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const target = {
    name: 'peer',
    origin: issuer,
    clientId: 'bench-client',
    clientSecret: randomBytes(32).toString('base64url'),
    redirectUri: 'http://127.0.0.1:9/callback',
  };
  const child = spawnServer(['bench/peer.ts'], {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    PEER_ISSUER: issuer,
    PEER_PORT: String(port),
    PEER_ALG: alg,
    PEER_CLIENT_ID: target.clientId,
    PEER_CLIENT_SECRET: target.clientSecret,
    PEER_REDIRECT_URI: target.redirectUri,
  });
  await waitForLine(child, /ready/, 'node-oidc-provider');
  const users = Array.from({ length: USERS }, (_, i) => ({ username: `user-${i}`, password: 'any password' }));
  return { target, child, stop: stopper(child), users };
}

interface Row extends Measurement {
  server: string;
  alg: string;
  workload: string;
  peakRssMiB: number;
  startRssMiB: number;
  endRssMiB: number;
  /** The server's CPU time (all threads) per completed iteration, in µs. */
  cpuPerIterationUs: number;
  /** The load generator's own CPU time per completed iteration, in µs: it shares the machine. */
  loadCpuPerIterationUs: number;
  /** tessera-pg with PostgreSQL on this machine: PostgreSQL's CPU time per completed iteration, in µs. */
  dbCpuPerIterationUs?: number;
  /** Which of BENCH_ROUNDS measurements of this workload, from 1. */
  round: number;
}

const ITERATIONS: Record<string, (user: VirtualUser) => Promise<void>> = {
  returning: async (user) => {
    const { code, verifier } = await user.authorize(API_SCOPE);
    await user.exchange(code, verifier);
  },
  refresh: (user) => user.refresh(),
  userinfo: (user) => user.userinfo(),
  'first-time': async (user) => {
    user.cookies.clear();
    const { code, verifier } = await user.authorize(API_SCOPE, 'login consent');
    await user.exchange(code, verifier);
  },
};

interface Contender {
  label: string;
  running: Running;
  http: Http;
  users: VirtualUser[];
  drop?: () => Promise<void>;
}

/** Every user signs in and consents once: the session and consent the returning-user flow reuses. */
async function signInAll(contender: Contender, scope: string): Promise<void> {
  await Promise.all(
    contender.users.map(async (user) => {
      const { code, verifier } = await user.authorize(scope);
      await user.exchange(code, verifier);
    }),
  );
}

async function measure(contender: Contender, alg: string, workload: string, round: number): Promise<Row> {
  const { label, running, users } = contender;
  const iteration = ITERATIONS[workload]!;
  // The peer's userinfo takes only its own (non-JWT) tokens: ask for OIDC scopes only.
  if (workload === 'userinfo') await signInAll(contender, 'openid profile email');
  await drive(users, WARMUP, iteration);
  const loadStart = process.cpuUsage();
  const dbStart = label === 'tessera-pg' && PG_LOCAL ? postgresCpuMs() : undefined;
  const { result, peakRssMiB, startRssMiB, endRssMiB, cpuMs } = await withPeakRss(running.child.pid!, () =>
    drive(users, SECONDS, iteration),
  );
  const loadUsage = process.cpuUsage(loadStart);
  const cpuPerIterationUs = Math.round((cpuMs * 1000) / Math.max(1, result.completed));
  const loadCpuPerIterationUs = Math.round((loadUsage.user + loadUsage.system) / Math.max(1, result.completed));
  const dbEnd = dbStart === undefined ? undefined : postgresCpuMs();
  const dbCpuPerIterationUs =
    dbStart === undefined || dbEnd === undefined
      ? undefined
      : Math.round(((dbEnd - dbStart) * 1000) / Math.max(1, result.completed));
  const db = dbCpuPerIterationUs === undefined ? '' : `, PostgreSQL ${dbCpuPerIterationUs}`;
  console.log(
    `${label.padEnd(12)} ${alg}  ${workload.padEnd(10)}  ${result.perSecond.toFixed(1).padStart(8)}/s  p50 ${result.p50.toFixed(1).padStart(6)} ms  p99 ${result.p99.toFixed(1).padStart(6)} ms  errors ${result.errors}  CPU ${cpuPerIterationUs} µs/iteration (load generator ${loadCpuPerIterationUs}${db})  RSS ${startRssMiB}→${endRssMiB} MiB (peak ${peakRssMiB})${result.firstError ? `  (${result.firstError})` : ''}`,
  );
  return {
    server: label,
    alg,
    workload,
    round,
    peakRssMiB,
    startRssMiB,
    endRssMiB,
    cpuPerIterationUs,
    loadCpuPerIterationUs,
    ...(dbCpuPerIterationUs === undefined ? {} : { dbCpuPerIterationUs }),
    ...result,
  };
}

async function start(server: string, alg: 'RS256' | 'ES256', dir: string): Promise<Contender | undefined> {
  let running: Running;
  let drop: (() => Promise<void>) | undefined;
  if (server === 'peer') running = await startPeer(alg);
  else if (server === 'tessera')
    running = await startTessera(alg, `sqlite:${join(dir, `tessera-${alg}-${Date.now()}.db`)}`, dir);
  else if (server === 'tessera-full') {
    const fill = {
      users: Number(process.env.BENCH_SEED_USERS ?? 100_000),
      refreshTokens: Number(process.env.BENCH_SEED_REFRESH_TOKENS ?? 1_000_000),
    };
    const started = Date.now();
    running = await startTessera(alg, `sqlite:${join(dir, `tessera-full-${alg}-${Date.now()}.db`)}`, dir, fill);
    console.log(
      `tessera-full: ${fill.users} users and ${fill.refreshTokens} live refresh tokens written in ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
  } else if (server === 'tessera-pg') {
    const database = await withPostgresDatabase(PG_URL);
    if (!database) {
      console.log('tessera-pg skipped: PostgreSQL unreachable');
      return undefined;
    }
    drop = database.drop;
    running = await startTessera(alg, database.url, dir);
  } else {
    throw new Error(`BENCH_SERVERS: unknown server ${server}`);
  }
  const http = new Http(running.target.origin, USERS);
  const users = running.users.map((credentials) => new VirtualUser(http, running.target, credentials));
  const contender: Contender = { label: server, running, http, users, ...(drop ? { drop } : {}) };
  await signInAll(contender, API_SCOPE);
  return contender;
}

// Per algorithm, every server is started first; then each workload runs against each server in
// turn, BENCH_ROUNDS times, the order reversed every other round so that no server always goes
// first. Measurements of one workload are minutes apart at most, which keeps their ratios steady
// on a machine whose speed drifts.
const rows: Row[] = [];
const dir = await mkdtemp(join(tmpdir(), 'tessera-bench-'));
try {
  for (const alg of ALGS) {
    const contenders: Contender[] = [];
    try {
      for (const server of SERVERS) {
        const contender = await start(server, alg, dir);
        if (contender) contenders.push(contender);
      }
      for (const workload of WORKLOADS) {
        for (let round = 1; round <= ROUNDS; round++) {
          const order = round % 2 === 1 ? contenders : [...contenders].reverse();
          for (const contender of order) rows.push(await measure(contender, alg, workload, round));
        }
      }
    } finally {
      for (const contender of contenders) {
        await contender.http.close();
        await contender.running.stop();
        await contender.drop?.();
      }
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

/** The median of the per-round ratios, with their range when there were several rounds. */
function ratio(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const median =
    sorted.length % 2 === 1
      ? sorted[(sorted.length - 1) / 2]!
      : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  return `×${median.toFixed(2)}${sorted.length > 1 ? ` (${sorted[0]!.toFixed(2)}–${sorted.at(-1)!.toFixed(2)})` : ''}`;
}

console.log(
  `\nTessera / node-oidc-provider (tessera-full: / tessera on an empty database)${ROUNDS > 1 ? `: medians of ${ROUNDS} rounds (range)` : ''}`,
);
for (const alg of ALGS) {
  for (const workload of WORKLOADS) {
    for (const server of ['tessera', 'tessera-pg', 'tessera-full']) {
      const pairs: Array<{ ours: Row; base: Row }> = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const find = (name: string) =>
          rows.find((r) => r.server === name && r.alg === alg && r.workload === workload && r.round === round);
        const ours = find(server);
        const base = find(server === 'tessera-full' ? 'tessera' : 'peer');
        if (ours && base) pairs.push({ ours, base });
      }
      if (pairs.length === 0) continue;
      const of = (f: (pair: { ours: Row; base: Row }) => number) => ratio(pairs.map(f));
      const counted = pairs.every(
        ({ ours, base }) => ours.dbCpuPerIterationUs !== undefined && base.dbCpuPerIterationUs === undefined,
      );
      const withDb = counted
        ? ` (${of(({ ours, base }) => (ours.cpuPerIterationUs + ours.dbCpuPerIterationUs!) / base.cpuPerIterationUs)} counting PostgreSQL)`
        : '';
      console.log(
        `${server.padEnd(12)} ${alg}  ${workload.padEnd(10)}  throughput ${of(({ ours, base }) => ours.perSecond / base.perSecond)}  p99 ${of(({ ours, base }) => ours.p99 / base.p99)}  CPU per iteration ${of(({ ours, base }) => ours.cpuPerIterationUs / base.cpuPerIterationUs)}${withDb}`,
      );
    }
  }
}
if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, `${JSON.stringify(rows, null, 2)}\n`);
