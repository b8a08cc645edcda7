// A company's provider inside its own network, with production's outbound rules: Tessera runs as a
// process trusting a throwaway certificate authority (NODE_EXTRA_CA_CERTS, as production trusts its
// own), TESSERA_OUTBOUND_ALLOW_PRIVATE unset, and node-oidc-provider serves https on loopback. The
// provider's address is refused (by `providers create`'s check and at sign-in) until the operator
// allows it with --allow-private-network; then signing in through it works.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, fetch as undiciFetch } from 'undici';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { createClient } from '../../src/admin/clients.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { loadConfig } from '../../src/config/index.ts';
import { openStore } from '../../src/store/index.ts';
import { KeyStore } from '../../src/tokens/keystore.ts';
import { type Instance, startInstance } from '../helpers/instances.ts';
import { freePort, PASSWORD } from '../helpers/server.ts';
import { createThrowawayCa } from '../helpers/tls.ts';
import { Browser } from '../helpers/upstream-browser.ts';
import { type OidcUpstream, startOidcUpstream } from '../helpers/upstreams.ts';

const CLI_ARGS = (
  JSON.parse(await readFile('package.json', 'utf8')) as { scripts: { tessera: string } }
).scripts.tessera
  .split(' ')
  .slice(1);

describe('a provider inside the network, allowed by the operator', () => {
  let dir: string;
  let env: Record<string, string>;
  let instance: Instance;
  let upstream: OidcUpstream;
  let browser: Browser;
  let agent: Agent;
  let client: { id: string; redirectUri: string };

  /** The tessera command as a process of its own, with the instance's settings. */
  const tessera = (args: string[], stdin = '') =>
    new Promise<{ code: number; out: string }>((resolve) => {
      const child = spawn(process.execPath, [...CLI_ARGS, ...args], { env: { PATH: process.env.PATH, ...env } });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('close', (code) => resolve({ code: code ?? -1, out }));
      child.stdin.end(stdin);
    });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-private-'));
    const ca = await createThrowawayCa(dir);
    const port = await freePort();
    env = {
      NODE_ENV: 'test',
      TESSERA_ISSUER: `http://127.0.0.1:${port}`,
      DATABASE_URL: `sqlite:${join(dir, 'tessera.db')}`,
      TESSERA_SECRET: randomBytes(32).toString('base64url'),
      TESSERA_DATA_DIR: dir,
      NODE_EXTRA_CA_CERTS: ca.caFile,
      LOG_LEVEL: 'warn',
    };
    const config = loadConfig(env);
    const store = await openStore(config.databaseUrl);
    try {
      await store.migrate();
      await KeyStore.open(store, env.TESSERA_SECRET!);
      await createUser(store, config, {
        username: 'alice',
        email: 'alice@example.com',
        passwordHash: await hashPassword(PASSWORD),
      });
      const redirectUri = `${env.TESSERA_ISSUER}/cb`;
      const made = await createClient(store, config, {
        name: 'App',
        redirectUris: [redirectUri],
        scopes: ['openid'],
        public: true,
        firstParty: true,
      });
      client = { id: made.client.clientId, redirectUri };
    } finally {
      await store.close();
    }
    upstream = await startOidcUpstream({
      redirectUris: [`${env.TESSERA_ISSUER}/login/upstream/corp/callback`],
      tls: ca,
    });
    instance = await startInstance(env, port);
    agent = new Agent({ connect: { ca: await readFile(ca.caFile, 'utf8') } });
    browser = new Browser(((url: URL, init: RequestInit) =>
      undiciFetch(url, { ...init, dispatcher: agent } as never)) as never);
  });
  after(async () => {
    await agent?.close();
    await instance?.stop();
    await upstream?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Presses the provider's button on a new request's sign-in page and follows the flow. */
  async function signIn() {
    const query = new URLSearchParams({
      ...{ client_id: client.id, redirect_uri: client.redirectUri, response_type: 'code', scope: 'openid' },
      ...{ code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' },
    });
    return browser.drive(
      `${env.TESSERA_ISSUER}/oauth2/authorize?${query}`,
      (p) =>
        p.status === 200 && p.url.pathname === '/login'
          ? { form: p.forms.find((f) => f.action === '/login/upstream/corp')! }
          : undefined,
      client.redirectUri,
    );
  }

  it('is refused on a private address until --allow-private-network, then signs in', async () => {
    const create = [
      'providers',
      'create',
      '--type',
      'oidc',
      '--id',
      'corp',
      '--name',
      'Corp',
      '--issuer',
      upstream.issuer,
    ];
    const secret = upstream.clientSecret;
    const refused = await tessera([...create, '--client-id', upstream.clientId, '--client-secret-stdin'], secret);
    assert.equal(refused.code, 1, refused.out);
    assert.match(refused.out, /is not a public address/);
    assert.match(refused.out, /--allow-private-network/);

    const stored = await tessera(
      [...create, '--client-id', upstream.clientId, '--client-secret-stdin', '--no-check'],
      secret,
    );
    assert.equal(stored.code, 0, stored.out);
    const { page } = await signIn();
    assert.equal(page?.status, 502);
    assert.match(page.body, /Signing in with Corp is not set up correctly/);

    const allowed = await tessera(['providers', 'update', 'corp', '--allow-private-network']);
    assert.equal(allowed.code, 0, allowed.out);
    upstream.next = { account: { sub: 'insider', email: 'insider@corp.example', email_verified: true }, amr: ['pwd'] };
    const { stoppedAt } = await signIn();
    assert.ok(stoppedAt?.searchParams.get('code'), 'signed in through the provider inside the network');
  });
});
