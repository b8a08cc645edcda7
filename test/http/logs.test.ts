// Logs without secrets: a flow's every credential (code, code_verifier, tokens, ID token hint,
// password, cookies, sealed requests) is sent the ways clients send them, with logging at its most
// verbose, and none appears in any log line.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, unknownSettings } from '../../src/config/index.ts';
import { openSqlite } from '../../src/store/sqlite/connection.ts';
import { redactUrl } from '../../src/http/log-safety.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';

describe('logs without secrets', () => {
  let server: TestServer;
  const lines: string[] = [];
  before(async () => {
    server = await startServer({ env: { LOG_LEVEL: 'trace' }, logStream: { write: (line) => void lines.push(line) } });
  });
  after(() => server?.close());

  it('no token, code, verifier, ID token hint, password, cookie or sealed request reaches a log line', async () => {
    const c = server.clients.public;
    const browser = new BrowserSim(server.issuer);
    const issued = await getCode(server, c, { browser, scope: 'openid' });
    const tokens = (await (await exchange(server, issued)).json()) as Record<string, string>;
    const secrets = [
      issued.code,
      issued.verifier!,
      tokens.access_token!,
      tokens.refresh_token!,
      tokens.id_token!,
      server.user.password,
    ];
    secrets.push(...[...browser.cookies.values()]);
    // Credentials where a careless client puts them: in query strings too.
    const leaky = new URLSearchParams({
      code: issued.code,
      code_verifier: issued.verifier!,
      token: tokens.access_token!,
    });
    await fetch(`${server.issuer}/oauth2/authorize?${leaky}&client_id=${c.id}`);
    await fetch(`${server.issuer}/oauth2/logout?id_token_hint=${tokens.id_token}`);
    await fetch(`${server.issuer}/oauth2/userinfo?access_token=${tokens.access_token}`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    const conf = server.clients.confidential;
    await tokenRequest(
      server,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! },
      basic(conf.id, conf.secret!),
    );
    secrets.push(conf.secret!);
    const interaction = (
      await browser.request(
        `/oauth2/authorize?client_id=${c.id}&redirect_uri=${encodeURIComponent(c.redirectUri)}&response_type=code&scope=openid&prompt=login&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256`,
      )
    ).headers.get('location')!;
    secrets.push(new URL(interaction, server.issuer).searchParams.get('interaction')!);
    await browser.request(interaction);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const log = lines.join('');
    assert.ok(log.includes('/oauth2/logout'), 'requests were logged');
    for (const secret of secrets)
      assert.equal(log.includes(secret), false, `a log line carries ${secret.slice(0, 12)}…`);
    assert.match(log, /id_token_hint=%5Bredacted%5D/);
  });

  it('redacts credential parameters by name and leaves the rest', () => {
    assert.equal(redactUrl('/cb?code=abc&state=s&iss=i'), '/cb?code=%5Bredacted%5D&state=%5Bredacted%5D&iss=i');
    assert.equal(redactUrl('/oauth2/authorize?client_id=x&scope=openid'), '/oauth2/authorize?client_id=x&scope=openid');
    assert.equal(redactUrl('/x'), '/x');
  });

  it('configuration errors say how to fix them, and SQLite errors name the file', async () => {
    assert.throws(
      () => loadConfig({ NODE_ENV: 'production', TESSERA_ISSUER: 'https://id.example' }),
      /TESSERA_SECRET: required in production; generate one with: openssl rand -base64 48/,
    );
    assert.throws(() => loadConfig({ TESSERA_SECRET: 'short' }), /TESSERA_SECRET: .*generate one with/);
    assert.throws(
      () => loadConfig({ NODE_ENV: 'production', TESSERA_ISSUER: 'http://id.example', TESSERA_SECRET: 'x'.repeat(40) }),
      /must be https in production; set it to the https URL clients use/,
    );
    const dir = await mkdtemp(join(tmpdir(), 'tessera-sqlite-'));
    try {
      // A folder where the database should be: SQLite cannot open it, and the error says which file.
      assert.throws(() => openSqlite(dir), new RegExp(`SQLite database ${dir}: `));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a misspelled setting is pointed out, with the one it probably meant', () => {
    const warnings = unknownSettings({
      TESSERA_SIGNNG_ALG: 'ES256',
      TESSERA_PORT: '4000',
      TESSERA_ISSUER: 'x',
      PATH: '/bin',
    });
    assert.equal(warnings.length, 2);
    assert.match(
      warnings.find((w) => w.startsWith('TESSERA_SIGNNG_ALG'))!,
      /did you mean TESSERA_SIGNING_ALG\?/,
    );
    assert.match(
      warnings.find((w) => w.startsWith('TESSERA_PORT'))!,
      /did you mean PORT\?/,
    );
  });
});
