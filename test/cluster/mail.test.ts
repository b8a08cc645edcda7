// Mail as production runs it: Tessera as real processes (as `npm start` runs it) sending through a
// real SMTP server the test runs (STARTTLS under a throwaway CA trusted through NODE_EXTRA_CA_CERTS,
// and a password). A reset asked for while the mail server is down, its process then killed with
// SIGKILL, is delivered once the server is back by the next process; two instances over one
// PostgreSQL database send each mail once (FOR UPDATE SKIP LOCKED).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { openStore } from '../../src/store/index.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { type Instance, startInstance } from '../helpers/instances.ts';
import { startSmtp, type TestSmtp } from '../helpers/smtp.ts';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';

async function mails(env: Record<string, string>): Promise<Array<{ to: string; status: string; attempts: number }>> {
  const lines: string[] = [];
  const io = { env, out: (l: string) => lines.push(l), err: (l: string) => lines.push(l), stdin: async () => '' };
  assert.equal(await run(['mail', 'list', '--json', '--limit', '100'], io), 0, lines.join('\n'));
  return JSON.parse(lines.join('\n')) as Array<{ to: string; status: string; attempts: number }>;
}

async function askReset(url: string, identifier: string): Promise<void> {
  const browser = new BrowserSim(url);
  const page = await (await browser.request('/reset/request')).text();
  const answer = await browser.request('/reset/request', {
    form: { csrf: BrowserSim.hidden(page, 'csrf'), identifier },
  });
  assert.equal(answer.status, 200);
}

describe('mail sent by real processes', () => {
  let dir: string;
  let smtp: TestSmtp;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-mail-'));
    smtp = await startSmtp();
  });
  after(async () => {
    await smtp?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const envFor = (databaseUrl: string) => ({
    TESSERA_ISSUER: 'http://127.0.0.1:1',
    DATABASE_URL: databaseUrl,
    TESSERA_SECRET: 'the-secret-of-the-mail-processes-test',
    TESSERA_DATA_DIR: dir,
    TESSERA_WEBHOOK_INTERVAL: '0.1',
    TESSERA_SMTP_URL: smtp.url,
    TESSERA_SMTP_PASSWORD: smtp.password,
    NODE_ENV: 'test',
  });

  async function withUsers(databaseUrl: string, names: string[]) {
    const store = await openStore(databaseUrl);
    await store.migrate();
    for (const username of names) {
      await createUser(store, null, { username, email: `${username}@example.com`, passwordHash: null });
    }
    await store.close();
  }

  it('a reset asked while the mail server is down, its process killed, arrives from the next process', async () => {
    const env = envFor(`sqlite:${join(dir, 'tessera.db')}`);
    await withUsers(env.DATABASE_URL, ['alice']);
    const childEnv = { ...env, NODE_EXTRA_CA_CERTS: smtp.caFile };
    await smtp.stop();
    let tessera: Instance | undefined = await startInstance(childEnv);
    try {
      await askReset(tessera.url, 'alice');
      const deadline = Date.now() + 10_000;
      while ((await mails(env))[0]?.attempts !== 1 && Date.now() < deadline) await sleep(100);
      const [waiting] = await mails(env);
      assert.equal(waiting?.status, 'pending', 'attempted once while the mail server was down');
      tessera.child.kill('SIGKILL');
      await tessera.stop();
      await smtp.start();
      tessera = await startInstance(childEnv);
      const mail = await smtp.waitFor((m) => m.to.includes('alice@example.com'));
      assert.match(mail.subject, /Reset your password/);
      assert.ok(mail.link?.includes('/reset?token='));
      const sentBy = Date.now() + 10_000;
      while ((await mails(env))[0]?.status !== 'sent' && Date.now() < sentBy) await sleep(100);
      assert.equal((await mails(env))[0]?.status, 'sent');
      assert.doesNotMatch(tessera.output(), /token=[A-Za-z0-9_-]{43}/);
    } finally {
      await tessera?.stop();
    }
  });

  describe('two instances over one PostgreSQL database', async () => {
    const database: TestDatabase | undefined = await withPostgresDatabase();
    after(() => database?.drop());
    it('each mail is sent once', { skip: !database && 'PostgreSQL unreachable' }, async () => {
      const env = envFor(database!.url);
      const names = Array.from({ length: 12 }, (_, i) => `person${i}`);
      await withUsers(env.DATABASE_URL, names);
      const childEnv = { ...env, NODE_EXTRA_CA_CERTS: smtp.caFile };
      const [a, b] = await Promise.all([startInstance(childEnv), startInstance(childEnv)]);
      try {
        await Promise.all(names.map((name, i) => askReset((i % 2 ? a : b).url, name)));
        await Promise.all(names.map((name) => smtp.waitFor((m) => m.to.includes(`${name}@example.com`))));
        const deadline = Date.now() + 10_000;
        while ((await mails(env)).some((m) => m.status !== 'sent') && Date.now() < deadline) await sleep(100);
        for (const name of names) {
          assert.equal(smtp.received.filter((m) => m.to.includes(`${name}@example.com`)).length, 1, name);
        }
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
    });
  });
});
