// What a newcomer does: start Tessera on an empty database (development mode), read the printed
// credentials and authorization URL, sign in, consent, and see the tokens on the demo callback page.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { demoFile } from '../../src/demo.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { freePort } from '../helpers/server.ts';

describe('first start in development (npm start)', () => {
  let dir: string;
  let child: ChildProcess;
  let output = '';
  let issuer: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-start-'));
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    // As `npm start` starts it: its Node.js flags and entry point, from package.json.
    const start = (
      JSON.parse(await readFile('package.json', 'utf8')) as { scripts: { start: string } }
    ).scripts.start.split(' ');
    assert.equal(start[0], 'node');
    child = spawn(process.execPath, start.slice(1), {
      env: {
        PATH: process.env.PATH,
        TESSERA_ISSUER: issuer,
        TESSERA_DATA_DIR: join(dir, 'data'),
        DATABASE_URL: `sqlite:${join(dir, 'data', 'tessera.db')}`,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const deadline = Date.now() + 20_000;
    while (!/Or the public client/.test(output)) {
      if (Date.now() > deadline || child.exitCode !== null) assert.fail(`Tessera did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  after(async () => {
    child?.kill('SIGTERM');
    await new Promise((resolve) => (child?.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
    await rm(dir, { recursive: true, force: true });
  });

  it('prints the demo credentials and keeps them, with a generated secret, under the data folder', async () => {
    const demo = JSON.parse(
      await readFile(
        demoFile({ dataDir: join(dir, 'data'), databaseUrl: `sqlite:${join(dir, 'data', 'tessera.db')}` }),
        'utf8',
      ),
    );
    assert.match(output, new RegExp(`user: +demo / ${demo.password}`));
    assert.match(output, new RegExp(demo.confidential.clientSecret));
    assert.ok((await readFile(join(dir, 'data', 'secret'), 'utf8')).trim().length >= 32);
  });

  for (const variant of ['confidential', 'public'] as const) {
    it(`the printed ${variant} URL leads to tokens on the demo callback page`, async () => {
      const demo = JSON.parse(
        await readFile(
          demoFile({ dataDir: join(dir, 'data'), databaseUrl: `sqlite:${join(dir, 'data', 'tessera.db')}` }),
          'utf8',
        ),
      );
      const urls = [...output.matchAll(/^\s+(http\S+\/oauth2\/authorize\S+)$/gm)].map((m) => m[1]!);
      const url = urls.find((u) => new URL(u).searchParams.get('state') === variant)!;
      assert.ok(url, `a ${variant} URL is printed`);
      const browser = new BrowserSim(issuer);
      const callback = await browser.authorize(url, { username: 'demo', password: demo.password });
      assert.equal(callback.pathname, '/demo/callback');
      const page = await browser.request(callback.href);
      const html = await page.text();
      assert.equal(page.status, 200, html);
      assert.match(html, /Tokens received/);
      assert.match(html, /&quot;token_type&quot;: &quot;Bearer&quot;/);
      assert.match(html, /id_token claims/);
    });
  }
});
