// Scale-out: Tessera on PostgreSQL as one instance and as BENCH_INSTANCES over the same database,
// each instance held to the same CPU share (a cgroup v1 `cpu.cfs_quota_us` of its own), the load
// generator and PostgreSQL outside those shares. Reports flows per second for one and for N
// instances and their ratio, for the returning-user and refresh flows, while people sign in:
// BENCH_SIGNIN_USERS per instance sign in afresh (password, consent remembered, code exchanged) all
// at once and again after BENCH_SIGNIN_PAUSE_MS, from the load generator's one address, as a crowd
// behind one NAT would; their sign-ins per second and refusals are reported beside the flows.
//
//   npm run bench:scale-out
//   BENCH_INSTANCES (4)  BENCH_SECONDS (10)  BENCH_WARMUP (3)  BENCH_USERS (32 per instance)
//   BENCH_SIGNIN_USERS (4 per instance)  BENCH_SIGNIN_PAUSE_MS (2000)  BENCH_ALGS (ES256)  BENCH_ROUNDS (3)
//   BENCH_WORKLOADS (returning,refresh)  BENCH_INSTANCE_CPU (0.25: cores per instance)  BENCH_JSON
//
// All instances run throughout; a "one instance" measurement sends BENCH_USERS virtual users (and
// the sign-in users) to the first, an "N instances" one as many to each, each user's flows on one
// instance. The two alternate, round by round, so that the machine's drift does not favour either.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/helpers/server.ts';
import { withPostgresDatabase } from '../test/store/databases.ts';
import { drive, Http, VirtualUser } from './load.ts';
import { PG_URL, spawnServer, START_ARGS, stopper, waitForReady } from './processes.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { seedTessera } from './seed.ts';

const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 4);
if (!Number.isInteger(INSTANCES) || INSTANCES < 2) throw new Error('BENCH_INSTANCES: expected an integer of 2 or more');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const USERS = Number(process.env.BENCH_USERS ?? 32);
const SIGNIN_USERS = Number(process.env.BENCH_SIGNIN_USERS ?? 4);
const SIGNIN_PAUSE_MS = Number(process.env.BENCH_SIGNIN_PAUSE_MS ?? 2000);
const ALGS = (process.env.BENCH_ALGS ?? 'ES256').split(',') as Array<'RS256' | 'ES256'>;
const WORKLOADS = (process.env.BENCH_WORKLOADS ?? 'returning,refresh').split(',');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SHARE = Number(process.env.BENCH_INSTANCE_CPU ?? 0.25);
const API_SCOPE = 'openid profile email apps webhooks';
const CGROUP = '/sys/fs/cgroup/cpu';

/** The machine's idle CPU time so far, and all CPU time, in clock ticks (/proc/stat). */
function machineTicks(): { idle: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  return { idle: fields[3]! + fields[4]!, total: fields.reduce((a, b) => a + b, 0) };
}

/** Holds a process to `SHARE` of a core: a cgroup of its own, removed by `release`. */
function capCpu(pid: number, name: string): { how: string; release(): void } {
  const dir = join(CGROUP, name);
  try {
    mkdirSync(dir);
    // A short period (10 ms) spreads the share evenly: with the default 100 ms, an instance would run
    // 40 ms and then stall 60 ms, and the stalls, not the share, would set its throughput.
    writeFileSync(join(dir, 'cpu.cfs_period_us'), '10000');
    writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(Math.round(SHARE * 10_000)));
    writeFileSync(join(dir, 'cgroup.procs'), String(pid));
    return {
      how: `cgroup ${dir}, ${SHARE} core`,
      release: () => {
        try {
          rmdirSync(dir);
        } catch {
          /* a process still in it; the cgroup goes with the machine */
        }
      },
    };
  } catch (err) {
    throw new Error(`cannot cap the instance's CPU with a cgroup (${CGROUP} must be writable): ${String(err)}`, {
      cause: err,
    });
  }
}

const ITERATIONS: Record<string, (user: VirtualUser) => Promise<void>> = {
  returning: async (user) => {
    const { code, verifier } = await user.authorize(API_SCOPE);
    await user.exchange(code, verifier);
  },
  refresh: (user) => user.refresh(),
};

/**
 * A person signing in afresh (a new browser: no session), then a pause. Many start at once: every
 * sign-in user of a measurement begins with it.
 */
async function signInAfresh(user: VirtualUser): Promise<void> {
  user.cookies.clear();
  const { code, verifier } = await user.authorize(API_SCOPE);
  await user.exchange(code, verifier);
  await sleep(SIGNIN_PAUSE_MS);
}

/** `run` on `items`, at most `limit` at a time. */
async function inBatches<T>(items: T[], limit: number, run: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += limit) await Promise.all(items.slice(i, i + limit).map(run));
}

interface Row {
  alg: string;
  workload: string;
  round: number;
  instances: number;
  perSecond: number;
  p99: number;
  errors: number;
  /** Sign-ins completed per second beside the flows, and those that failed (a 429 among them). */
  signInsPerSecond: number;
  signInErrors: number;
  firstSignInError?: string;
  /** The whole machine's CPU in use during the measurement, in per cent. */
  busy: number;
  /** The load generator's own CPU (this process, one thread for the users), in per cent of a core. */
  generator: number;
}

const rows: Row[] = [];
const dir = await mkdtemp(join(tmpdir(), 'tessera-scale-out-'));
const cleanups: Array<() => Promise<void> | void> = [];
try {
  for (const alg of ALGS) {
    const database = await withPostgresDatabase(PG_URL);
    if (!database) throw new Error('PostgreSQL unreachable');
    cleanups.push(database.drop);
    const issuer = `http://127.0.0.1:${await freePort()}`;
    const secret = randomBytes(32).toString('base64url');
    const redirectUri = 'http://127.0.0.1:9/callback';
    // Each layout has users of its own: the returning and refresh users, then the sign-in users.
    const perLayout = USERS + SIGNIN_USERS;
    const seeded = await seedTessera({
      databaseUrl: database.url,
      issuer,
      secret,
      redirectUri,
      users: (1 + INSTANCES) * perLayout,
      extraUsers: 0,
      extraRefreshTokens: 0,
    });
    const origins: string[] = [];
    for (let i = 0; i < INSTANCES; i++) {
      const port = await freePort();
      const child = spawnServer(START_ARGS, {
        PATH: process.env.PATH,
        NODE_ENV: 'development',
        TESSERA_DEMO: 'false',
        LOG_LEVEL: 'warn',
        TESSERA_ISSUER: issuer,
        PORT: String(port),
        DATABASE_URL: database.url,
        TESSERA_SECRET: secret,
        TESSERA_DATA_DIR: dir,
        TESSERA_SIGNING_ALG: alg,
      });
      // Capped from its first instruction: threads it starts later (libuv's pool) inherit the cgroup.
      const cap = capCpu(child.pid!, `tessera-bench-${process.pid}-${alg}-${i}`);
      cleanups.push(cap.release, stopper(child));
      await waitForReady(child, `http://127.0.0.1:${port}`, 'Tessera');
      console.log(`instance ${i + 1}: 127.0.0.1:${port}, ${cap.how}`);
      origins.push(`http://127.0.0.1:${port}`);
    }
    const https = origins.map((origin) => new Http(origin, USERS + SIGNIN_USERS));
    cleanups.push(...https.map((http) => () => http.close()));
    const { clientId, clientSecret } = seeded;
    const target = (i: number) => ({ name: 'tessera', origin: origins[i]!, redirectUri, clientId, clientSecret });
    // The one-instance layout takes the first users, the N-instance layout the next: BENCH_USERS
    // (and BENCH_SIGNIN_USERS) per instance, user u on instance u mod count. So the question is the
    // operator's: with N times the clients, do N instances serve N times as many?
    let next = 0;
    const layout = (count: number, perInstance: number) => {
      const credentials = seeded.users.slice(next, next + count * perInstance);
      next += count * perInstance;
      return credentials.map((c, u) => new VirtualUser(https[u % count]!, target(u % count), c));
    };
    const layouts = new Map(
      [1, INSTANCES].map((count) => [count, { users: layout(count, USERS), signIns: layout(count, SIGNIN_USERS) }]),
    );
    // Every user signs in and consents once on its instance: the returning-user flow reuses that,
    // and the sign-in users' consent is remembered. A few at a time: this is the set-up, not the test.
    for (const { users, signIns } of layouts.values()) {
      await inBatches([...users, ...signIns], 8, (user) => ITERATIONS.returning!(user));
    }
    for (const workload of WORKLOADS) {
      for (let round = 1; round <= ROUNDS; round++) {
        for (const instances of round % 2 === 1 ? [1, INSTANCES] : [INSTANCES, 1]) {
          const { users, signIns } = layouts.get(instances)!;
          const measure = (seconds: number) =>
            Promise.all([drive(users, seconds, ITERATIONS[workload]!), drive(signIns, seconds, signInAfresh)]);
          await measure(WARMUP);
          const before = machineTicks();
          const cpuBefore = process.cpuUsage();
          const started = performance.now();
          const [m, signedIn] = await measure(SECONDS);
          const cpu = process.cpuUsage(cpuBefore);
          const generator = Math.round((100 * (cpu.user + cpu.system)) / 1000 / (performance.now() - started));
          const after = machineTicks();
          // How busy the whole machine was: near 100 % means something outside the shares was the limit.
          const busy = Math.round(100 * (1 - (after.idle - before.idle) / (after.total - before.total)));
          rows.push({
            alg,
            workload,
            round,
            instances,
            perSecond: m.perSecond,
            p99: m.p99,
            errors: m.errors,
            signInsPerSecond: signedIn.perSecond,
            signInErrors: signedIn.errors,
            ...(signedIn.firstError ? { firstSignInError: signedIn.firstError } : {}),
            busy,
            generator,
          });
          const what = `${instances} instance${instances > 1 ? 's' : ' '}`;
          const signInText = `sign-ins ${signedIn.perSecond.toFixed(1)}/s, ${signedIn.errors} failed`;
          console.log(
            `${alg}  ${workload.padEnd(10)} round ${round}  ${what}  ${m.perSecond.toFixed(1).padStart(8)}/s  ` +
              `p99 ${m.p99.toFixed(1).padStart(6)} ms  errors ${m.errors}  ${signInText}  machine ${busy} % busy, ` +
              `load generator ${generator} % of a core`,
          );
          if (signedIn.firstError) console.log(`  first failed sign-in: ${signedIn.firstError.slice(0, 160)}`);
        }
      }
    }
    while (cleanups.length > 0) await cleanups.pop()!();
  }
} finally {
  while (cleanups.length > 0) await cleanups.pop()!();
  await rm(dir, { recursive: true, force: true });
}

console.log(`\n${INSTANCES} instances / one instance, each held to ${SHARE} core (median of ${ROUNDS} rounds, range):`);
for (const alg of ALGS) {
  for (const workload of WORKLOADS) {
    const ratios: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const of = (n: number) =>
        rows.find((r) => r.alg === alg && r.workload === workload && r.round === round && r.instances === n);
      ratios.push(of(INSTANCES)!.perSecond / of(1)!.perSecond);
    }
    ratios.sort((a, b) => a - b);
    const median = ratios[Math.floor(ratios.length / 2)]!;
    const failed = rows
      .filter((r) => r.alg === alg && r.workload === workload)
      .reduce((sum, r) => sum + r.signInErrors, 0);
    console.log(
      `${alg}  ${workload.padEnd(10)} ×${median.toFixed(2)} (${ratios[0]!.toFixed(2)}–${ratios.at(-1)!.toFixed(2)})` +
        `  sign-ins that failed beside it: ${failed}`,
    );
  }
}
if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, `${JSON.stringify(rows, null, 2)}\n`);
