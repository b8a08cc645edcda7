// PORT alone moves a development server: its issuer, its discovery document and the demo URLs it
// prints. Production still requires TESSERA_ISSUER, and an issuer that is set is never moved.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { type Instance, startInstance } from '../helpers/instances.ts';
import { freePort } from '../helpers/server.ts';
import { until } from '../helpers/webhook-receiver.ts';

describe('PORT and the issuer', () => {
  it('without TESSERA_ISSUER, the development issuer is on PORT (3000 without it)', () => {
    assert.equal(loadConfig({}).issuer, 'http://localhost:3000');
    assert.equal(loadConfig({}).port, 3000);
    const moved = loadConfig({ PORT: '4100' });
    assert.equal(moved.issuer, 'http://localhost:4100');
    assert.equal(moved.port, 4100);
    assert.equal(moved.accessTokenAudience, 'http://localhost:4100');
    assert.equal(loadConfig({ NODE_ENV: 'test', PORT: '4100' }).issuer, 'http://localhost:4100');
    // Any free port: nothing to name, so the issuer keeps the default.
    assert.equal(loadConfig({ PORT: '0' }).issuer, 'http://localhost:3000');
  });

  it('an issuer that is set is kept whatever PORT says (a proxy in front serves it)', () => {
    const config = loadConfig({ TESSERA_ISSUER: 'http://localhost:3000', PORT: '4100' });
    assert.equal(config.issuer, 'http://localhost:3000');
    assert.equal(config.port, 4100);
    const production = loadConfig({
      NODE_ENV: 'production',
      TESSERA_ISSUER: 'https://id.example.com',
      TESSERA_SECRET: 'x'.repeat(40),
      PORT: '8080',
    });
    assert.equal(production.issuer, 'https://id.example.com');
    assert.equal(production.port, 8080);
  });

  it('production without TESSERA_ISSUER is a settings error, PORT or not', () => {
    for (const env of [{}, { PORT: '8080' }]) {
      assert.throws(
        () => loadConfig({ NODE_ENV: 'production', TESSERA_SECRET: 'x'.repeat(40), ...env }),
        (err) => err instanceof ConfigError && /^TESSERA_ISSUER: required in production; set it to/.test(err.message),
      );
    }
  });
});

describe('a development server started with PORT alone', () => {
  let dir = '';
  let instance: Instance | undefined;
  after(async () => {
    await instance?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Starts `npm start`'s command on `port` with the demo, waiting for the demo's URL. */
  const start = async (port: number) => {
    instance = await startInstance(
      {
        NODE_ENV: 'development',
        TESSERA_DEMO: 'true',
        LOG_LEVEL: 'info',
        DATABASE_URL: `sqlite:${join(dir, 'tessera.db')}`,
        TESSERA_DATA_DIR: dir,
      },
      port,
    );
    const printed = /^\s+(http:\/\/\S+\/oauth2\/authorize\?\S+)$/m;
    await until(() => printed.test(instance!.output()), 'the demo URL is printed', 10_000);
    return new URL(printed.exec(instance.output())![1]!);
  };

  /** The authorization URL as a browser on this machine opens it (the server listens on 127.0.0.1). */
  const open = (url: URL) => fetch(url.href.replace('//localhost:', '//127.0.0.1:'), { redirect: 'manual' });

  it('serves its issuer on that port and prints demo URLs there that work, and again on another port', async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-port-'));
    for (const port of [await freePort(), await freePort()]) {
      const url = await start(port);
      const issuer = `http://localhost:${port}`;
      assert.equal(url.origin, issuer, instance!.output());
      assert.equal(url.searchParams.get('redirect_uri'), `${issuer}/demo/callback`);
      const discovery = await fetch(`http://127.0.0.1:${port}/.well-known/openid-configuration`);
      const metadata = (await discovery.json()) as { issuer: string; token_endpoint: string };
      assert.equal(metadata.issuer, issuer);
      assert.equal(metadata.token_endpoint, `${issuer}/oauth2/token`);
      assert.match(instance!.output(), new RegExp(`"issuer":"${issuer}"`));
      // The demo client takes this callback: the sign-in page, not the error page of an unknown redirect URI.
      const answer = await open(url);
      assert.equal(answer.status, 302, await answer.text());
      assert.match(answer.headers.get('location') ?? '', /^\/login\?interaction=/);
      await instance!.stop();
      instance = undefined;
    }
  });
});
