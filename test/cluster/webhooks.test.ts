// Webhooks as production runs them: Tessera as real processes (as `npm start` runs it) delivering
// over https to a receiver the test runs, trusted through NODE_EXTRA_CA_CERTS. A receiver that is
// down, and a process killed with SIGKILL between events and their delivery, lose nothing; two
// instances over one PostgreSQL database make each attempt once (FOR UPDATE SKIP LOCKED).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { run } from '../../src/cli/main.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { openStore } from '../../src/store/index.ts';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { type Instance, startInstance } from '../helpers/instances.ts';
import { freePort, PASSWORD } from '../helpers/server.ts';
import { createThrowawayCa, type ThrowawayCa } from '../helpers/tls.ts';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';

interface Received {
  headers: Record<string, string>;
  body: string;
}

/** An https receiver on 127.0.0.1:port, under the throwaway CA; it can go down and come back. */
class Receiver {
  readonly received: Received[] = [];
  #server: Server | undefined;
  readonly ca: ThrowawayCa;
  readonly port: number;
  constructor(ca: ThrowawayCa, port: number) {
    this.ca = ca;
    this.port = port;
  }
  get url() {
    return `https://127.0.0.1:${this.port}/hook`;
  }
  async start() {
    this.#server = createServer({ key: this.ca.key, cert: this.ca.cert }, (request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        this.received.push({ headers: request.headers as Record<string, string>, body });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(this.port, '127.0.0.1', resolve));
  }
  async stop() {
    this.#server?.closeAllConnections();
    await new Promise((resolve) => (this.#server ? this.#server.close(resolve) : resolve(undefined)));
  }
  async waitFor(count: number, seconds: number) {
    const deadline = Date.now() + seconds * 1000;
    while (this.received.length < count && Date.now() < deadline) await sleep(50);
    return this.received;
  }
}

async function cli(env: Record<string, string>, args: string[]): Promise<string> {
  const lines: string[] = [];
  const io = { env, out: (l: string) => lines.push(l), err: (l: string) => lines.push(l), stdin: async () => '' };
  const code = await run(args, io);
  assert.equal(code, 0, lines.join('\n'));
  return lines.join('\n');
}

describe('webhooks delivered by real processes', () => {
  let dir: string;
  let ca: ThrowawayCa;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-webhooks-'));
    ca = await createThrowawayCa(dir);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const envFor = (databaseUrl: string) => ({
    TESSERA_ISSUER: 'http://127.0.0.1:1',
    DATABASE_URL: databaseUrl,
    TESSERA_SECRET: 'the-secret-of-the-webhook-processes-test',
    TESSERA_DATA_DIR: dir,
    TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true',
    TESSERA_WEBHOOK_INTERVAL: '0.1',
    NODE_ENV: 'test',
  });

  it('a receiver down and a process killed with SIGKILL between the events and their delivery lose nothing', async () => {
    const env = envFor(`sqlite:${join(dir, 'tessera.db')}`);
    const store = await openStore(env.DATABASE_URL);
    await store.migrate();
    await createUser(store, null, {
      username: 'alice',
      email: 'a@example.com',
      passwordHash: await hashPassword(PASSWORD),
    });
    await store.close();
    const receiver = new Receiver(ca, await freePort());
    const hook = JSON.parse(
      await cli(env, ['webhooks', 'create', '--url', receiver.url, '--events', 'user.disabled,user.enabled', '--json']),
    ) as { id: string; secret: string };
    const childEnv = { ...env, NODE_EXTRA_CA_CERTS: ca.caFile };
    let tessera: Instance | undefined = await startInstance(childEnv);
    try {
      // The receiver is down: the first attempt fails, and the delivery waits for its retry.
      await cli(env, ['users', 'disable', 'alice']);
      const deadline = Date.now() + 10_000;
      let attempts = 0;
      while (attempts === 0 && Date.now() < deadline) {
        await sleep(100);
        const shown = JSON.parse(await cli(env, ['webhooks', 'deliveries', hook.id, '--json'])) as Array<{
          attempts: number;
        }>;
        attempts = shown[0]?.attempts ?? 0;
      }
      assert.equal(attempts, 1, 'attempted once while the receiver was down');
      tessera.child.kill('SIGKILL');
      await tessera.stop();
      // An event while no process runs at all.
      await cli(env, ['users', 'enable', 'alice']);
      await receiver.start();
      tessera = await startInstance(childEnv);
      const received = await receiver.waitFor(2, 15);
      const verifier = new Webhook(hook.secret);
      const types = received.map((r) => (verifier.verify(r.body, r.headers) as { type: string }).type).sort();
      assert.deepEqual(types, ['user.disabled', 'user.enabled']);
    } finally {
      await tessera?.stop();
      await receiver.stop();
    }
  });

  describe('two instances over one PostgreSQL database', async () => {
    const database: TestDatabase | undefined = await withPostgresDatabase();
    after(() => database?.drop());
    it(
      'each delivery is attempted by exactly one instance',
      { skip: !database && 'PostgreSQL unreachable' },
      async () => {
        const env = envFor(database!.url);
        const store = await openStore(env.DATABASE_URL);
        await store.migrate();
        await store.close();
        const receiver = new Receiver(ca, await freePort());
        await receiver.start();
        const hook = JSON.parse(
          await cli(env, ['webhooks', 'create', '--url', receiver.url, '--events', 'user.created', '--json']),
        ) as { id: string; secret: string };
        const childEnv = { ...env, NODE_EXTRA_CA_CERTS: ca.caFile };
        const instances = [await startInstance(childEnv), await startInstance(childEnv)];
        try {
          const writer = await openStore(env.DATABASE_URL);
          for (let i = 0; i < 40; i++)
            await createUser(writer, null, { username: `user${i}`, email: `u${i}@example.com` });
          await writer.close();
          const received = await receiver.waitFor(40, 20);
          await sleep(500);
          const ids = received.map((r) => r.headers['webhook-id']);
          assert.equal(ids.length, 40, 'every event arrived, none twice');
          assert.equal(new Set(ids).size, 40);
          const verifier = new Webhook(hook.secret);
          for (const r of received) verifier.verify(r.body, r.headers);
          const log = JSON.parse(
            await cli(env, ['webhooks', 'deliveries', hook.id, '--limit', '100', '--json']),
          ) as Array<{ status: string; log: unknown[] }>;
          assert.equal(log.length, 40);
          assert.ok(
            log.every((d) => d.status === 'delivered' && d.log.length === 1),
            'one attempt each',
          );
        } finally {
          for (const instance of instances) await instance.stop();
          await receiver.stop();
        }
      },
    );
  });
});
