// A TESSERA_SECRET rotation under two running instances over one PostgreSQL database, as
// docs/rotation.md walks it: first every instance accepts the new secret (TESSERA_SECRET_PREVIOUS),
// then every instance makes with it, `tessera secret reencrypt` moves the stored values, and the old
// secret leaves. At every step in between, with the instances at different steps, users sign in,
// clients redeem codes, keys sign and verify, webhooks deliver; what the old secret sealed (a code,
// a login page, a refresh token) works until the old secret leaves the keyring.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { run } from '../../src/cli/main.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { type Cluster, startCluster, startInstance } from '../helpers/instances.ts';
import { freePort, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';

interface Tokens {
  access_token: string;
  refresh_token: string;
}

const kidOf = (jwt: string) =>
  (JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;

describe('a TESSERA_SECRET rotation under two running instances', async () => {
  const database: TestDatabase | undefined = await withPostgresDatabase();
  const skip = !database && 'PostgreSQL unreachable';
  const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      response.writeHead(204).end();
    });
  });
  let cluster: Cluster;
  let receiverUrl: string;
  before(async () => {
    if (!database) return;
    const port = await freePort();
    await new Promise<void>((resolve) => receiver.listen(port, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${port}/hook`;
    cluster = await startCluster(database.url, {
      env: {
        TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true',
        TESSERA_WEBHOOK_INTERVAL: '0.1',
        TESSERA_KEY_RELOAD_INTERVAL: '1',
      },
    });
  });
  after(async () => {
    await cluster?.stop();
    receiver.close();
    await database?.drop();
  });

  it('keeps users, clients, keys and webhooks working', { skip }, async () => {
    const OLD = cluster.secret;
    const NEW = randomBytes(32).toString('base64url');
    const ports = cluster.instances.map((i) => Number(new URL(i.url).port));
    const confidential = cluster.clients.confidential;
    const auth = basic(confidential.id, confidential.secret!);
    const via = (url: string) =>
      ({ issuer: url, user: cluster.user, clients: cluster.clients }) as unknown as TestServer;
    const tessera = async (secrets: Record<string, string>, args: string[]) => {
      const lines: string[] = [];
      const io = {
        env: { ...cluster.env, ...secrets, NODE_ENV: 'test' },
        out: (l: string) => lines.push(l),
        err: (l: string) => lines.push(l),
        stdin: async () => '',
      };
      assert.equal(await run(args, io), 0, lines.join('\n'));
      return lines.join('\n');
    };
    /** Signs in through the balancer (each step at the next instance), redeems the code at `url`. */
    const tokensAt = async (url: string): Promise<Tokens> => {
      const response = await exchange(via(url), await getCode(via(cluster.issuer), confidential));
      assert.equal(response.status, 200, await response.clone().text());
      return (await response.json()) as Tokens;
    };
    const refreshAt = (url: string, token: string) =>
      tokenRequest(via(url), { grant_type: 'refresh_token', refresh_token: token }, auth);
    const userinfoAt = (url: string, token: string) =>
      fetch(`${url}/oauth2/userinfo`, { headers: { authorization: `Bearer ${token}` } });
    const jwks = async () =>
      ((await (await fetch(`${cluster.issuer}/oauth2/jwks`)).json()) as { keys: Array<{ kid: string }> }).keys
        .map((k) => k.kid)
        .sort();
    /** Everything works across both instances, whichever step each is at. */
    const everythingWorks = async (step: string) => {
      const [a, b] = cluster.instances.map((i) => i.url) as [string, string];
      const tokens = await tokensAt(b);
      assert.equal((await userinfoAt(a, tokens.access_token)).status, 200, `${step}: a's token at b`);
      const refreshed = await refreshAt(a, tokens.refresh_token);
      assert.equal(refreshed.status, 200, `${step}: a refresh at the other instance`);
      const next = (await refreshed.json()) as Tokens;
      assert.equal((await refreshAt(b, next.refresh_token)).status, 200, `${step}: and back`);
      const service = await tokenRequest(
        via(a),
        { grant_type: 'authorization_code', code: 'x', redirect_uri: 'y' },
        auth,
      );
      assert.equal(
        ((await service.json()) as { error: string }).error,
        'invalid_grant',
        `${step}: the client's secret`,
      );
    };
    const restart = async (index: number, secrets: Record<string, string>) => {
      await cluster.instances[index]!.stop();
      const env = { ...cluster.env, ...secrets };
      if (!('TESSERA_SECRET_PREVIOUS' in secrets)) delete (env as Record<string, string>).TESSERA_SECRET_PREVIOUS;
      cluster.instances[index] = await startInstance(env, ports[index]);
    };
    let deliveries = 0;
    /** A user created through the CLI: its event delivered, signed with the webhook's secret. */
    const delivered = async (hook: { secret: string }, secrets: Record<string, string>) => {
      deliveries++;
      await tessera(secrets, ['users', 'create', '--username', `user${deliveries}`, '--email', 'u@example.com']);
      const deadline = Date.now() + 10_000;
      while (received.length < deliveries) {
        assert.ok(Date.now() < deadline, `user${deliveries}'s event delivered`);
        await sleep(50);
      }
      const last = received.at(-1)!;
      const verified = new Webhook(hook.secret).verify(last.body, last.headers as Record<string, string>);
      assert.equal((verified as { type: string }).type, 'user.created');
    };

    const hook = JSON.parse(
      await tessera({}, ['webhooks', 'create', '--url', receiverUrl, '--events', 'user.created', '--json']),
    ) as { secret: string };
    const keysBefore = await jwks();
    await everythingWorks('before');
    const unusedUntilTheEnd = await tokensAt(cluster.issuer);
    const refreshedMidway = await tokensAt(cluster.issuer);

    // 1. Every instance accepts the new secret, and still makes everything with the old one.
    const accepting = { TESSERA_SECRET: OLD, TESSERA_SECRET_PREVIOUS: NEW };
    await restart(0, accepting);
    await everythingWorks('one instance accepts the new secret');
    await restart(1, accepting);
    await everythingWorks('both accept it');

    // What the old secret sealed just before the switch: a login page (its CSRF token and sealed
    // interaction) and an authorization code.
    const browser = new BrowserSim(cluster.issuer);
    const params = new URLSearchParams({
      client_id: confidential.id,
      redirect_uri: confidential.redirectUri,
      response_type: 'code',
      scope: 'openid',
      state: 's',
    });
    const login = (await browser.request(`/oauth2/authorize?${params}`)).headers.get('location')!;
    const loginPage = await (await browser.request(login)).text();
    const code = await getCode(via(cluster.issuer), confidential);

    // 2. Every instance makes with the new secret and opens with either.
    const making = { TESSERA_SECRET: NEW, TESSERA_SECRET_PREVIOUS: OLD };
    await restart(0, making);
    await everythingWorks('one instance makes with the new secret, the other still with the old');
    // A key made under the new secret now is used by the instance that still makes with the old one.
    const rotated = await tessera(making, ['keys', 'rotate', '--now', '--alg', 'RS256']);
    const newKid = /signing key (\S+):/.exec(rotated)![1]!;
    const deadline = Date.now() + 5_000;
    while (kidOf((await tokensAt(cluster.instances[1]!.url)).access_token) !== newKid) {
      assert.ok(Date.now() < deadline, 'the other instance signs with the key made under the new secret');
      await sleep(200);
    }
    await delivered(hook, making);
    await restart(1, making);
    await everythingWorks('both make with the new secret');
    await delivered(hook, making);
    const signedIn = await browser.request('/login', {
      form: {
        interaction: BrowserSim.hidden(loginPage, 'interaction'),
        csrf: BrowserSim.hidden(loginPage, 'csrf'),
        ...cluster.user,
      },
    });
    assert.equal(signedIn.status, 303, 'a login page shown under the old secret still signs in');
    assert.match(signedIn.headers.get('location')!, /\/consent|code=/);
    assert.equal((await exchange(via(cluster.issuer), code)).status, 200, 'a code sealed under the old secret');
    const midway = await refreshAt(cluster.issuer, refreshedMidway.refresh_token);
    assert.equal(midway.status, 200, 'a refresh token issued under the old secret');
    const afterSwitch = (await midway.json()) as Tokens;

    // 3. The stored values move to the new secret; then the old one leaves every instance.
    const moved = await tessera(making, ['secret', 'reencrypt']);
    assert.match(moved, /signing_keys\.private_jwk_enc: [1-9]\d* re-encrypted/);
    assert.match(moved, /webhooks\.secret_enc: 1 re-encrypted/);
    assert.match(await tessera({ TESSERA_SECRET: NEW }, ['secret', 'reencrypt', '--dry-run']), /: 0 to re-encrypt/);
    const newOnly = { TESSERA_SECRET: NEW };
    await restart(0, newOnly);
    await restart(1, newOnly);
    await everythingWorks('the old secret gone');
    await delivered(hook, newOnly);
    assert.deepEqual(
      (await jwks()).filter((kid) => keysBefore.includes(kid)),
      keysBefore,
      'the keys from before are kept, and still published',
    );
    assert.equal((await refreshAt(cluster.issuer, afterSwitch.refresh_token)).status, 200);
    assert.equal(
      (await refreshAt(cluster.issuer, unusedUntilTheEnd.refresh_token)).status,
      400,
      'a refresh token issued under the old secret and never used ends when the old secret leaves',
    );
  });
});
