// Starting and stopping as a production instance, through the real entry point (package.json's start
// script): waiting for a database that is not there yet, giving up with one line, and SIGTERM under
// load with a drain that drops no request already received.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { freePort } from '../helpers/server.ts';
import { withPostgresDatabase } from '../store/databases.ts';

const START = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start
  .split(' ')
  .slice(1);

interface Started {
  url: string;
  output: () => string;
  exit: Promise<{ code: number | null; at: number }>;
  kill: (signal?: NodeJS.Signals) => void;
}

async function spawnServer(env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const child = spawn(process.execPath, START, {
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      TESSERA_ISSUER: `http://127.0.0.1:${port}`,
      TESSERA_DEMO: 'false',
      TESSERA_SECRET: 'a-secret-of-at-least-thirty-two-characters',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exit = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once('exit', (code) => resolve({ code, at: Date.now() })),
  );
  return { url: `http://127.0.0.1:${port}`, output: () => output, exit, kill: (signal) => child.kill(signal) };
}

async function ready(server: Started, within = 20_000): Promise<void> {
  const deadline = Date.now() + within;
  while ((await fetch(`${server.url}/readyz`).catch(() => undefined))?.status !== 200) {
    assert.ok(Date.now() < deadline, `not ready: ${server.output()}`);
    await sleep(50);
  }
}

describe('starting with the database down', async () => {
  const database = await withPostgresDatabase();
  const skip = !database && 'PostgreSQL unreachable';
  const dir = mkdtempSync(join(tmpdir(), 'tessera-lifecycle-'));
  after(async () => {
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('retries with backoff, logging each attempt, then exits 1 with one line naming the database', async () => {
    const port = await freePort();
    const started = Date.now();
    const server = await spawnServer({
      DATABASE_URL: `postgres://tessera:hunter2@127.0.0.1:${port}/tessera?sslmode=disable&password=hunter3`,
      TESSERA_DB_CONNECT_TIMEOUT: '2',
    });
    const { code, at } = await server.exit;
    assert.equal(code, 1);
    assert.ok(at - started < 10_000);
    // JSON lines, like every other log line.
    const lines = server
      .output()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: number; msg: string; attempt?: number });
    const waits = lines.filter((l) => l.msg.startsWith(`waiting for the database postgres://***@127.0.0.1:${port}`));
    assert.ok(waits.length >= 2, server.output());
    assert.equal(waits[0]!.level, 40);
    assert.equal(waits[0]!.attempt, 1);
    assert.match(waits[0]!.msg, /attempt 1, again in 500 ms/);
    assert.equal(lines.at(-1)!.level, 60);
    assert.match(
      lines.at(-1)!.msg,
      new RegExp(
        `^cannot start: the database postgres://\\*\\*\\*@127\\.0\\.0\\.1:${port}/tessera\\?sslmode=disable&password=\\*\\*\\*: unreachable after 2 s`,
      ),
    );
    assert.doesNotMatch(server.output(), /hunter2|hunter3|^\s+at /m);
  });

  it('a database that does not exist is no reason to wait: one line, exit 1 at once', { skip }, async () => {
    const url = new URL(database!.url);
    url.pathname = '/no_such_database_here';
    const server = await spawnServer({ DATABASE_URL: url.href, TESSERA_DB_CONNECT_TIMEOUT: '30' });
    const { code } = await server.exit;
    assert.equal(code, 1);
    assert.doesNotMatch(server.output(), /waiting for the database/);
    assert.match(server.output(), /"msg":"cannot start: the database .*no_such_database_here.*does not exist"}$/m);
  });

  it('serves once the database appears while it waits', { skip }, async () => {
    const port = await freePort();
    const url = new URL(database!.url);
    url.port = String(port);
    const server = await spawnServer({ DATABASE_URL: url.href, TESSERA_DB_CONNECT_TIMEOUT: '30' });
    let proxy: Server | undefined;
    const sockets = new Set<Socket>();
    try {
      // Until it says it waits (a loaded machine takes more than a second to start Node.js).
      const deadline = Date.now() + 15_000;
      while (!/waiting for the database/.test(server.output()) && Date.now() < deadline) await sleep(100);
      assert.match(server.output(), /waiting for the database/);
      // PostgreSQL "comes up" on the port: a proxy to the real one.
      const target = new URL(database!.url);
      proxy = createServer((socket) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        for (const s of [socket, upstream]) {
          sockets.add(s);
          s.on('error', () => {});
        }
        socket.pipe(upstream).pipe(socket);
      });
      await new Promise<void>((resolve) => proxy!.listen(port, '127.0.0.1', resolve));
      await ready(server);
    } finally {
      server.kill();
      await server.exit;
      for (const s of sockets) s.destroy();
      proxy?.close();
    }
  });
});

describe('SIGTERM', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-lifecycle-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('under load over keep-alive: not ready at once, serves through the drain, drops nothing received, exits 0', async () => {
    const server = await spawnServer({ DATABASE_URL: `sqlite:${join(dir, 'drain.db')}`, TESSERA_SHUTDOWN_DRAIN: '1' });
    await ready(server);
    const agent = new Agent({ connections: 8, pipelining: 1 });
    const outcomes = new Map<string, number>();
    const count = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    // Like a load balancer's traffic: it goes on through the first half of the drain (the balancer
    // has not noticed yet), then stops before the listener closes.
    let running = true;
    const workers = Array.from({ length: 8 }, async (_, i) => {
      while (running) {
        try {
          const response =
            i % 2 === 0
              ? await request(`${server.url}/oauth2/jwks`, { dispatcher: agent })
              : await request(`${server.url}/oauth2/token`, {
                  method: 'POST',
                  dispatcher: agent,
                  headers: { 'content-type': 'application/x-www-form-urlencoded' },
                  body: 'grant_type=refresh_token&refresh_token=x&client_id=nobody',
                });
          await response.body.text();
          count(String(response.statusCode));
        } catch (err) {
          count((err as { code?: string }).code ?? String(err));
        }
      }
    });
    // Traffic of both kinds flowing before the signal (however slow a busy machine makes it).
    const answered = (key: string) => outcomes.get(key) ?? 0;
    const deadline = Date.now() + 60_000;
    while (answered('200') <= 50 || answered('401') + answered('429') <= 50) {
      assert.ok(Date.now() < deadline, JSON.stringify([...outcomes]));
      await sleep(20);
    }
    server.kill('SIGTERM');
    const signalled = Date.now();
    await sleep(200);
    assert.equal((await fetch(`${server.url}/readyz`)).status, 503, 'not ready while draining');
    const during = await fetch(`${server.url}/oauth2/jwks`);
    assert.equal(during.status, 200, 'still serving while draining');
    assert.equal(during.headers.get('connection'), 'close');
    await sleep(300);
    running = false;
    await Promise.all(workers);
    const { code, at } = await server.exit;
    await agent.close();
    assert.equal(code, 0, server.output());
    assert.ok(at - signalled >= 1000, 'the drain lasted its second');
    assert.ok(at - signalled < 5000);
    // 401 for the unknown client, then 429 once its failures are throttled: answers all the same.
    const failed = [...outcomes.keys()].filter((k) => !['200', '401', '429'].includes(k));
    assert.deepEqual(failed, [], JSON.stringify([...outcomes]));
    const refused = (outcomes.get('401') ?? 0) + (outcomes.get('429') ?? 0);
    assert.ok(outcomes.get('200')! > 50 && refused > 50, JSON.stringify([...outcomes]));
  });

  it('a request in flight when the listener closes is answered before the process exits', async () => {
    const server = await spawnServer({ DATABASE_URL: `sqlite:${join(dir, 'inflight.db')}` });
    await ready(server);
    const port = Number(new URL(server.url).port);
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (d) => (answer += d));
    const body = 'grant_type=refresh_token&refresh_token=x&client_id=nobody';
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // The headers and half the body now; the rest after SIGTERM.
    socket.write(
      `POST /oauth2/token HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/x-www-form-urlencoded\r\n` +
        `content-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    // Time for the server to read the headers, even on a busy machine: the request is then in flight.
    await sleep(200);
    server.kill('SIGTERM');
    await sleep(300);
    // The rest of the body, without closing our side: a client waits for the answer.
    socket.write(body.slice(10));
    const { code } = await server.exit;
    socket.destroy();
    assert.equal(code, 0, server.output());
    assert.match(answer, /^HTTP\/1\.1 401 /, server.output());
    assert.match(answer, /"error":"invalid_client"/);
  });
});
