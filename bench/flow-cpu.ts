// CPU per flow of builds side by side, in one process: each build's app (its test/helpers/server.ts,
// so any build since the people round's start), ES256, driven through Fastify's inject (no sockets),
// the builds alternated round by round so that the machine's drift falls on all alike. What a
// returning-user flow (GET /oauth2/authorize with the session → code → POST /oauth2/token) and a
// refresh cost the event loop (`process.threadCpuUsage`) and the whole process (with the SQLite
// writer thread and the commits' fsync). CPU time rather than throughput: on a shared machine a
// neighbour slows the clock, not the instruction count, so CPU per flow moves less than flows per second.
//
//   node bench/flow-cpu.ts [ROOT ...]        each ROOT a checkout of Tessera (default: this one)
//   FLOW_N (1000 flows per round)  FLOW_ROUNDS (6)  FLOW_LANES (8 flows in flight)
//   FLOW_DB (sqlite | postgres)  FLOW_WORKLOADS (returning,refresh; also authorize and exchange:
//     the returning flow's two requests alone)
//   FLOW_PROFILE=prefix: a CPU profile of the event loop during the measured rounds of each workload,
//     written to prefix-<workload>.cpuprofile (bench/profile-top.ts reads it); best with one ROOT
//   FLOW_HEAP=prefix: what the measured rounds allocate, sampled by V8 (garbage collected since included),
//     written to prefix-<workload>.heapprofile (bench/profile-top.ts reads it too, FLOWS=n for bytes per
//     flow); with one ROOT. Unlike CPU time, bytes allocated per flow do not move with the machine's load
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';

const N = Number(process.env.FLOW_N ?? 1000);
const ROUNDS = Number(process.env.FLOW_ROUNDS ?? 6);
const LANES = Number(process.env.FLOW_LANES ?? 8);
const DB = process.env.FLOW_DB ?? 'sqlite';
const WORKLOADS = (process.env.FLOW_WORKLOADS ?? 'returning,refresh').split(',');
const SCOPE = 'openid profile email apps webhooks';
const roots = (process.argv.length > 2 ? process.argv.slice(2) : ['.']).map((r) => resolve(r));

interface Server {
  app: FastifyInstance;
  user: { username: string; password: string };
  clients: { confidential: { id: string; secret: string; redirectUri: string } };
  close(): Promise<void>;
}

/** A browser of one lane: its cookies, and the newest refresh token its client holds. */
interface Lane {
  cookie: string;
  refreshToken: string;
}

class Build {
  readonly root: string;
  server!: Server;
  dropDatabase?: () => Promise<void>;
  lanes: Lane[] = [];
  basic = '';
  constructor(root: string) {
    this.root = root;
  }

  async start(): Promise<void> {
    const helpers = await import(pathToFileURL(`${this.root}/test/helpers/server.ts`).href);
    let databaseUrl: string | undefined;
    if (DB === 'postgres') {
      const databases = await import(pathToFileURL(`${this.root}/test/store/databases.ts`).href);
      const database = await databases.withPostgresDatabase();
      if (!database) throw new Error('PostgreSQL unreachable');
      databaseUrl = database.url;
      this.dropDatabase = database.drop;
    }
    const env = { TESSERA_SIGNING_ALG: 'ES256' };
    this.server = (await helpers.startServer({ env, ...(databaseUrl ? { databaseUrl } : {}) })) as Server;
    const client = this.server.clients.confidential;
    this.basic = `Basic ${Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64')}`;
    // Each lane signs in and consents once, one after the other, as a browser of its own.
    for (let i = 0; i < LANES; i++) this.lanes.push(await this.#signIn());
  }

  async #signIn(): Promise<Lane> {
    const cookies = new Map<string, string>();
    const keep = (headers: Record<string, unknown>) => {
      const set = headers['set-cookie'];
      for (const cookie of Array.isArray(set) ? set : set ? [set] : []) {
        const pair = String(cookie).split(';')[0]!;
        const eq = pair.indexOf('=');
        cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
    };
    const cookie = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const { verifier, url } = this.#authorizeUrl();
    let response = await this.server.app.inject({ method: 'GET', url, headers: { cookie: cookie() } });
    for (let step = 0; step < 10; step++) {
      keep(response.headers);
      const location = response.headers.location as string | undefined;
      if (location?.startsWith(this.server.clients.confidential.redirectUri)) {
        const lane = { cookie: cookie(), refreshToken: '' };
        lane.refreshToken = (await this.#exchange(location, verifier)).refresh_token!;
        return lane;
      }
      if (location) {
        const target = new URL(location, 'http://x');
        response = await this.server.app.inject({
          method: 'GET',
          url: target.pathname + target.search,
          headers: { cookie: cookie() },
        });
        continue;
      }
      if (response.statusCode !== 200)
        throw new Error(`sign-in: ${response.statusCode} ${response.body.slice(0, 300)}`);
      const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(response.body);
      if (!form) throw new Error(`no form: ${response.body.slice(0, 300)}`);
      const fields = new URLSearchParams();
      for (const input of form[2]!.matchAll(/<input([^>]*)>/gi)) {
        const name = /name="([^"]*)"/.exec(input[1]!)?.[1];
        if (!name) continue;
        const value = (/value="([^"]*)"/.exec(input[1]!)?.[1] ?? '').replace(/&amp;/g, '&').replace(/&quot;/g, '"');
        if (name === 'password') fields.set(name, this.server.user.password);
        else if (name === 'username') fields.set(name, this.server.user.username);
        else fields.set(name, value);
      }
      const allow = /<button[^>]*name="([^"]*)"[^>]*value="(allow)"/i.exec(form[2]!);
      if (allow) fields.set(allow[1]!, allow[2]!);
      response = await this.server.app.inject({
        method: 'POST',
        url: form[1]!.replace(/&amp;/g, '&'),
        headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: fields.toString(),
      });
    }
    throw new Error('sign-in: too many steps');
  }

  #authorizeUrl(): { verifier: string; url: string } {
    const verifier = randomBytes(32).toString('base64url');
    const params = new URLSearchParams({
      client_id: this.server.clients.confidential.id,
      redirect_uri: this.server.clients.confidential.redirectUri,
      response_type: 'code',
      scope: SCOPE,
      state: randomBytes(8).toString('hex'),
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    return { verifier, url: `/oauth2/authorize?${params}` };
  }

  async #token(form: Record<string, string>): Promise<Record<string, string>> {
    const response = await this.server.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: this.basic },
      payload: new URLSearchParams(form).toString(),
    });
    if (response.statusCode !== 200) throw new Error(`token: ${response.statusCode} ${response.body}`);
    return JSON.parse(response.body) as Record<string, string>;
  }

  async #exchange(location: string, verifier: string): Promise<Record<string, string>> {
    const code = new URL(location).searchParams.get('code');
    if (!code) throw new Error(`no code: ${location}`);
    const redirectUri = this.server.clients.confidential.redirectUri;
    const tokens = await this.#token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
    });
    if (!tokens.access_token || !tokens.refresh_token || !tokens.id_token) throw new Error('incomplete token response');
    return tokens;
  }

  async returning(lane: Lane): Promise<void> {
    const { verifier, url } = this.#authorizeUrl();
    const response = await this.server.app.inject({ method: 'GET', url, headers: { cookie: lane.cookie } });
    const location = response.headers.location as string | undefined;
    if (response.statusCode !== 302 || !location?.includes('code=')) {
      throw new Error(`authorize: ${response.statusCode} ${location ?? response.body.slice(0, 200)}`);
    }
    await this.#exchange(location, verifier);
  }

  /** The authorization request alone (the returning flow's first half): its code and verifier. */
  async authorizeOnly(lane: Lane): Promise<{ location: string; verifier: string }> {
    const { verifier, url } = this.#authorizeUrl();
    const response = await this.server.app.inject({ method: 'GET', url, headers: { cookie: lane.cookie } });
    if (response.statusCode !== 302) throw new Error(`authorize: ${response.statusCode}`);
    return { location: response.headers.location as string, verifier };
  }

  async refresh(lane: Lane): Promise<void> {
    lane.refreshToken = (
      await this.#token({ grant_type: 'refresh_token', refresh_token: lane.refreshToken })
    ).refresh_token!;
  }

  /** `n` flows, LANES at a time: CPU µs per flow, event loop and whole process. */
  async measure(workload: string, n: number): Promise<{ loop: number; process: number }> {
    // The code exchange alone (the returning flow's second half): its codes are asked for beforehand.
    const codes = workload === 'exchange' ? await this.#codes(n) : [];
    const flows: Record<string, (lane: Lane) => Promise<unknown>> = {
      returning: (lane) => this.returning(lane),
      authorize: (lane) => this.authorizeOnly(lane),
      exchange: async () => {
        const { location, verifier } = codes.pop()!;
        await this.#exchange(location, verifier);
      },
      refresh: (lane) => this.refresh(lane),
    };
    const flow = flows[workload];
    if (!flow) throw new Error(`FLOW_WORKLOADS: unknown workload ${workload}`);
    let left = n;
    const thread0 = process.threadCpuUsage();
    const process0 = process.cpuUsage();
    await Promise.all(
      this.lanes.map(async (lane) => {
        while (left-- > 0) await flow(lane);
      }),
    );
    const thread = process.threadCpuUsage(thread0);
    const all = process.cpuUsage(process0);
    return { loop: (thread.user + thread.system) / n, process: (all.user + all.system) / n };
  }

  async #codes(n: number): Promise<Array<{ location: string; verifier: string }>> {
    const codes: Array<{ location: string; verifier: string }> = [];
    await Promise.all(
      this.lanes.map(async (lane) => {
        while (codes.length < n) codes.push(await this.authorizeOnly(lane));
      }),
    );
    return codes;
  }

  async close(): Promise<void> {
    await this.server.close();
    await this.dropDatabase?.();
  }
}

const builds = roots.map((root) => new Build(root));
try {
  for (const build of builds) await build.start();
  for (const workload of WORKLOADS) {
    // Warm-up: the JIT and the caches of each build.
    for (const build of builds) await build.measure(workload, Math.max(200, N / 2));
    const results = builds.map(() => [] as Array<{ loop: number; process: number }>);
    const profiler = process.env.FLOW_PROFILE ? new Session() : undefined;
    const heap = process.env.FLOW_HEAP ? new Session() : undefined;
    if (heap) {
      heap.connect();
      await heap.post('HeapProfiler.enable');
      await heap.post('HeapProfiler.startSampling', {
        samplingInterval: 256,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
    }
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.setSamplingInterval', { interval: 200 });
      await profiler.post('Profiler.start');
    }
    for (let round = 0; round < ROUNDS; round++) {
      // Alternated, and the order reversed every other round: old, new, new, old, …
      const order = builds.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      for (const i of order) results[i]!.push(await builds[i]!.measure(workload, N));
    }
    if (profiler) {
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(`${process.env.FLOW_PROFILE}-${workload}.cpuprofile`, JSON.stringify(profile));
      profiler.disconnect();
    }
    if (heap) {
      const { profile } = await heap.post('HeapProfiler.stopSampling');
      writeFileSync(`${process.env.FLOW_HEAP}-${workload}.heapprofile`, JSON.stringify(profile));
      heap.disconnect();
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    console.log(`\n${workload} (${DB}, ES256, ${N} flows × ${ROUNDS} rounds, ${LANES} in flight): CPU µs per flow`);
    builds.forEach((build, i) => {
      const loop = results[i]!.map((r) => r.loop);
      const all = results[i]!.map((r) => r.process);
      console.log(
        `  ${build.root.padEnd(24)} event loop median ${median(loop).toFixed(0).padStart(4)} (${loop.map((v) => v.toFixed(0)).join(' ')})` +
          `   process median ${median(all).toFixed(0).padStart(4)} (${all.map((v) => v.toFixed(0)).join(' ')})`,
      );
    });
    for (let b = 1; b < builds.length; b++) {
      const ratios = results[b]!.map((r, k) => r.loop / results[0]![k]!.loop);
      const shown = ratios.map((r) => r.toFixed(3)).join(' ');
      console.log(`  event loop, build ${b + 1} / build 1, per round: ${shown}; median ${median(ratios).toFixed(3)}`);
    }
  }
} finally {
  for (const build of builds) await build.close().catch(() => undefined);
}
