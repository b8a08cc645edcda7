// Mail through a relay on this machine (Postfix on localhost:25, as on many hosts): plain SMTP when
// TESSERA_SMTP_URL says so (`?disable_starttls=true`), and only to a loopback host; any other host,
// or no such parameter, keeps TLS required. The relay is the test SMTP server (../helpers/smtp.ts),
// offering STARTTLS under a certificate Tessera does not trust, as Debian's snakeoil is.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUser } from '../../src/admin/new-user.ts';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { smtpTransport } from '../../src/mail/transport.ts';
import { openStore } from '../../src/store/index.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { type Instance, startInstance } from '../helpers/instances.ts';
import { startSmtp, type TestSmtp } from '../helpers/smtp.ts';

const settingsError = (url: string, message: RegExp) =>
  assert.throws(
    () => loadConfig({ TESSERA_SMTP_URL: url }),
    (err) => err instanceof ConfigError && message.test(err.message) && !err.message.includes('hunter2'),
  );

describe('TESSERA_SMTP_URL without TLS', () => {
  it('is taken for a loopback host, when the URL says disable_starttls=true', () => {
    for (const host of ['localhost', 'LOCALHOST', '127.0.0.1', '127.1.2.3', '[::1]']) {
      const url = `smtp://${host}:25?disable_starttls=true`;
      assert.equal(loadConfig({ TESSERA_SMTP_URL: url }).mail.smtp?.url, url);
    }
    assert.ok(loadConfig({ TESSERA_SMTP_URL: 'smtp://mail.example.com:587?disable_starttls=false' }).mail.smtp);
  });

  it('is a settings error for any other host, and says why without the password', () => {
    for (const host of [
      'mail.example.com',
      '10.0.0.25',
      '192.168.1.1',
      '[::2]',
      '128.0.0.1',
      'localhost.example.com',
    ]) {
      settingsError(
        `smtp://tessera:hunter2@${host}:25?disable_starttls=true`,
        /^TESSERA_SMTP_URL: disable_starttls=true is for a relay on this machine only .* mail to another host goes through TLS/,
      );
    }
  });

  it('is a settings error with smtps://, with a value other than true or false, or under another name', () => {
    settingsError('smtps://localhost:465?disable_starttls=true', /goes with smtp:\/\/, not smtps:\/\//);
    settingsError('smtp://localhost:25?disable_starttls=yes', /disable_starttls is true or false/);
    settingsError('smtp://tessera:hunter2@localhost:25?tls=none', /unknown parameter "tls"; the only one is/);
  });
});

describe('mail through a relay on this machine', () => {
  let relay: TestSmtp;
  let dir: string;
  let tessera: Instance | undefined;
  before(async () => {
    relay = await startSmtp({ relay: true });
    dir = await mkdtemp(join(tmpdir(), 'tessera-relay-'));
  });
  after(async () => {
    await tessera?.stop();
    await relay?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('is delivered in plain SMTP by a running server when the URL says so', async () => {
    const databaseUrl = `sqlite:${join(dir, 'tessera.db')}`;
    const store = await openStore(databaseUrl);
    await store.migrate();
    await createUser(store, null, { username: 'alice', email: 'alice@example.com', passwordHash: null });
    await store.close();
    tessera = await startInstance({
      TESSERA_ISSUER: 'http://127.0.0.1:1',
      DATABASE_URL: databaseUrl,
      TESSERA_SECRET: 'the-secret-of-the-mail-relay-test-process',
      TESSERA_DATA_DIR: dir,
      TESSERA_WEBHOOK_INTERVAL: '0.1',
      TESSERA_SMTP_URL: `${relay.url}?disable_starttls=true`,
    });
    const browser = new BrowserSim(tessera.url);
    const page = await (await browser.request('/reset/request')).text();
    const answer = await browser.request('/reset/request', {
      form: { csrf: BrowserSim.hidden(page, 'csrf'), identifier: 'alice' },
    });
    assert.equal(answer.status, 200);
    const mail = await relay.waitFor((m) => m.to.includes('alice@example.com'));
    assert.match(mail.subject, /Reset your password/);
    assert.equal(mail.secure, false, 'no STARTTLS, though the relay offered it');
  });

  it('without the parameter, the same relay gets nothing: STARTTLS is required and its certificate checked', async () => {
    const before = relay.received.length;
    const transport = smtpTransport({ url: relay.url, password: null, timeoutMs: 5_000 });
    try {
      const mail = { from: 'no-reply@example.com', to: 'bob@example.com', subject: 's', text: 't', html: '<p>t</p>' };
      await assert.rejects(transport.send(mail), /certificate/i);
    } finally {
      transport.close();
    }
    assert.equal(relay.received.length, before);
  });
});
