// systemd's socket activation (docs/deployment.md): one instance restarted under load refuses no
// connection. This test plays systemd's part: it opens the listening socket, hands it to a shell that
// keeps it open (and never accepts) while it starts Tessera, and again once the first process has
// stopped, as `systemctl restart` does; each process gets the socket as fd 3 with LISTEN_PID set to
// its own pid. Without it, a proxy in front of a single instance answers 502 while nothing listens.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { inheritedSocket } from '../../src/lifecycle.ts';

const START = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start
  .split(' ')
  .slice(1);

/** One request on a connection of its own: its status, or the connection's error. */
function healthz(port: number): Promise<number | string> {
  return new Promise((resolve) => {
    const request = get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

describe('socket activation', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-socket-'));
  let supervisor: ChildProcess | undefined;
  after(() => {
    // The shell and whichever Tessera it runs: one process group.
    if (supervisor?.pid && supervisor.exitCode === null) {
      try {
        process.kill(-supervisor.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes fd 3 only when LISTEN_PID names this process, and exactly one socket', () => {
    assert.equal(inheritedSocket({}, 42), undefined);
    assert.equal(inheritedSocket({ LISTEN_PID: '41', LISTEN_FDS: '1' }, 42), undefined);
    assert.equal(inheritedSocket({ LISTEN_PID: '42', LISTEN_FDS: '1' }, 42), 3);
    assert.throws(() => inheritedSocket({ LISTEN_PID: '42', LISTEN_FDS: '2' }, 42), /exactly one/);
  });

  it('a restart under load: connections wait for the next process, none is refused', async () => {
    const socket = createServer();
    await new Promise<void>((resolve) => socket.listen(0, '127.0.0.1', resolve));
    const port = (socket.address() as { port: number }).port;
    const fd = (socket as unknown as { _handle: { fd: number } })._handle.fd;
    // Two runs, one after the other, as systemd's stop and start; each prints its pid, then becomes Tessera.
    const run = `sh -c 'echo "started $$"; LISTEN_PID=$$ LISTEN_FDS=1 exec "$NODE" $START'`;
    supervisor = spawn('sh', ['-c', `${run}; ${run}`], {
      env: {
        PATH: process.env.PATH,
        NODE: process.execPath,
        START: START.join(' '),
        NODE_ENV: 'test',
        TESSERA_ISSUER: `http://127.0.0.1:${port}`,
        TESSERA_SECRET: 'a-secret-of-at-least-thirty-two-characters',
        DATABASE_URL: `sqlite:${join(dir, 'tessera.db')}`,
        TESSERA_DEMO: 'false',
        TESSERA_SHUTDOWN_DRAIN: '1',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe', fd],
      detached: true,
    });
    // From here on only the shell holds the socket; this process never accepts on it.
    socket.close();
    let output = '';
    supervisor.stdout!.on('data', (d) => (output += d));
    supervisor.stderr!.on('data', (d) => (output += d));
    const started = () => [...output.matchAll(/^started (\d+)$/gm)].map((m) => Number(m[1]));

    const deadline = Date.now() + 20_000;
    while ((await healthz(port)) !== 200) {
      assert.ok(Date.now() < deadline, `the first process did not start:\n${output}`);
      await sleep(50);
    }
    const statuses = new Map<number | string, number>();
    let running = true;
    const load = [1, 2, 3].map(async () => {
      while (running) {
        const status = await healthz(port);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    });
    try {
      await sleep(300);
      const [first] = started();
      process.kill(first!, 'SIGTERM');
      const restarted = Date.now() + 30_000;
      while (started().length < 2) {
        assert.ok(Date.now() < restarted, `the second process did not start:\n${output}`);
        await sleep(50);
      }
      // Until the second process has answered for a while.
      const served = (statuses.get(200) ?? 0) + 20;
      while ((statuses.get(200) ?? 0) < served) {
        assert.ok(Date.now() < restarted, `the second process does not answer:\n${output}`);
        await sleep(50);
      }
    } finally {
      running = false;
      await Promise.all(load);
    }
    assert.deepEqual([...statuses.keys()], [200], `answers: ${[...statuses]}\n${output}`);
    process.kill(started()[1]!, 'SIGTERM');
    const code = await new Promise((resolve) => supervisor!.once('exit', resolve));
    assert.equal(code, 0, output);
  });
});
