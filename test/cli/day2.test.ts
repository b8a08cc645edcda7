// An operator's day-2 commands: `users show` says why a user cannot sign in (a lock), what they can
// sign in with and how many sessions they have; `users sessions` lists the sessions; `users sign-out`
// ends every one (and with --grants every application's access); clients get their own token
// lifetimes, which the token endpoint uses; an unknown event type is named.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { commandLine } from '../helpers/cli.ts';
import { startServer, type TestClient, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';

// The server's throttling, and the CLI's (which reads the same settings): a lock after three failures.
const THROTTLE = { TESSERA_SIGNIN_FREE_FAILURES: '2', TESSERA_SIGNIN_LOCK_AFTER: '3' };

interface Tokens {
  access_token: string;
  refresh_token: string;
  id_token: string;
  expires_in: number;
}

describe("an operator's day-2 commands", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: THROTTLE });
  });
  after(() => server?.close());

  const { cli, json } = commandLine(() => server, THROTTLE);

  it('users show names a lock, until when and how to end it; users unlock ends it', async () => {
    const c = server.clients.confidential;
    const browser = new BrowserSim(server.issuer);
    const params = new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      response_type: 'code',
      scope: 'openid',
    });
    const login = (await browser.request(`/oauth2/authorize?${params}`)).headers.get('location')!;
    assert.match(login, /^\/login/);
    // Three wrong passwords, the third after the delay the second one earned (the server's clock moves).
    for (let failure = 1; failure <= 3; failure++) {
      if (failure === 3) server.clock.offset += 2;
      const answer = await browser.login(login, server.user.username, 'not the password');
      assert.notEqual(answer.status, 429, `failure ${failure} was refused rather than counted`);
    }
    try {
      const shown = await json(['users', 'show', 'alice']);
      assert.match(shown.sign_in, /^locked until \d{4}-.*\(tessera users unlock alice\)$/);
      assert.deepEqual(
        shown.sign_in_throttles.map((t: Record<string, unknown>) => [t.from, t.failures, t.state]),
        [['anywhere', 3, 'locked']],
      );
      assert.deepEqual(shown.factors, ['password']);
      const text = await cli(['users', 'show', 'alice']);
      assert.match(text.out, /^sign_in +locked until /m);
      assert.match(text.out, /failed sign-ins from anywhere: 3, the last at .* \(locked\)/);

      assert.equal((await cli(['users', 'unlock', 'alice'])).code, 0);
      const unlocked = await json(['users', 'show', 'alice']);
      assert.equal(unlocked.sign_in, 'open');
      assert.deepEqual(unlocked.sign_in_throttles, []);
    } finally {
      server.clock.offset -= 2;
    }
  });

  it('users sessions lists where a user is signed in; users sign-out ends every session, and keeps grants', async () => {
    const c = server.clients.confidential;
    const [laptop, phone] = [new BrowserSim(server.issuer), new BrowserSim(server.issuer)];
    await getCode(server, c, { browser: laptop, scope: 'openid' });
    const tokens = (await (
      await exchange(server, await getCode(server, c, { browser: phone, scope: 'openid' }))
    ).json()) as Tokens;

    const sessions = await json(['users', 'sessions', 'alice']);
    assert.equal(sessions.length, 2);
    for (const session of sessions) {
      assert.deepEqual(session.factors, ['password']);
      assert.equal(session.ip, '127.0.0.1');
      assert.match(session.session, /^[0-9a-f]{12}$/);
    }
    assert.equal((await json(['users', 'show', 'alice'])).sessions, 2);

    const out = await cli(['users', 'sign-out', 'alice']);
    assert.equal(out.code, 0, out.out);
    assert.match(out.out, /2 sessions ended, applications keep their access/);
    for (const browser of [laptop, phone])
      assert.equal((await browser.request('/account')).headers.get('location'), '/account/login', 'signed out');
    assert.deepEqual(await json(['users', 'sessions', 'alice']), []);
    const refreshed = await tokenRequest(
      server,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      basic(c.id, c.secret!),
    );
    assert.equal(refreshed.status, 200, 'without --grants the applications keep their access');
    const [signedOut] = await server.store.listEvents({ type: 'user.signed_out', userId: server.user.id });
    assert.deepEqual(signedOut?.data, { everywhere: true });
  });

  it('users sign-out --grants revokes every grant too: refresh tokens stop, access tokens turn inactive', async () => {
    const c = server.clients.confidential;
    const browser = new BrowserSim(server.issuer);
    const tokens = (await (
      await exchange(server, await getCode(server, c, { browser, scope: 'openid' }))
    ).json()) as Tokens;
    const out = await cli(['users', 'sign-out', 'alice', '--grants']);
    assert.equal(out.code, 0, out.out);
    assert.match(out.out, /1 session ended, [1-9]\d* grant\(s\) revoked/);
    const refreshed = await tokenRequest(
      server,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      basic(c.id, c.secret!),
    );
    assert.equal(refreshed.status, 400);
    const userinfo = await fetch(`${server.issuer}/oauth2/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(userinfo.status, 401);
    const revoked = await server.store.listEvents({ type: 'token.revoked', userId: server.user.id });
    assert.ok(revoked.some((e) => e.clientId === c.id));
    assert.deepEqual(await json(['grants', 'list', '--user', 'alice']), []);
  });

  it("a client's own token lifetimes: set, used by the token endpoint, shown, and back to the server's", async () => {
    const redirectUri = `${server.issuer}/cb/short-lived`;
    const created = await json([
      ...['clients', 'create', '--name', 'Short-lived', '--redirect-uri', redirectUri, '--scope', 'openid'],
      ...['--access-token-ttl', '600', '--id-token-ttl', '300', '--refresh-token-ttl', '3600'],
    ]);
    assert.deepEqual([created.access_token_ttl, created.id_token_ttl, created.refresh_token_ttl], [600, 300, 3600]);
    const client: TestClient = {
      id: created.client_id,
      secret: created.client_secret,
      redirectUri,
      postLogoutRedirectUri: `${redirectUri}/out`,
    };
    const issued = (await (
      await exchange(server, await getCode(server, client, { scope: 'openid' }))
    ).json()) as Tokens;
    assert.equal(issued.expires_in, 600);
    const access = decodeJwt(issued.access_token);
    assert.equal(access.exp! - access.iat!, 600);
    const id = decodeJwt(issued.id_token);
    assert.equal(id.exp! - id.iat!, 300);
    const introspected = await fetch(`${server.issuer}/oauth2/introspect`, {
      method: 'POST',
      headers: { authorization: basic(client.id, client.secret!), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: issued.refresh_token }),
    });
    const refresh = (await introspected.json()) as { exp: number; iat: number };
    assert.equal(refresh.exp - refresh.iat, 3600);

    // Longer than the server allows: refused, naming the setting that is the ceiling.
    const tooLong = await cli(['clients', 'update', client.id, '--access-token-ttl', '999999']);
    assert.equal(tooLong.code, 2);
    assert.match(tooLong.out, /--access-token-ttl may be at most 86400 s, the server's TESSERA_ACCESS_TOKEN_TTL/);
    assert.equal((await cli(['clients', 'update', client.id, '--access-token-ttl', 'soon'])).code, 2);

    const updated = await json(['clients', 'update', client.id, '--access-token-ttl', 'default']);
    assert.equal(updated.access_token_ttl, null);
    assert.equal(updated.id_token_ttl, 300, 'the others stay');
    assert.match((await cli(['clients', 'show', client.id])).out, /^access_token_ttl +default \(86400\)$/m);
    server.store.clearCaches();
    const next = await tokenRequest(
      server,
      { grant_type: 'refresh_token', refresh_token: issued.refresh_token },
      basic(client.id, client.secret!),
    );
    assert.equal(((await next.json()) as Tokens).expires_in, 86400);
  });

  it('an unknown event type is named, with the one it probably meant', async () => {
    const created = await cli([
      'webhooks',
      'create',
      '--url',
      'https://hooks.example/t',
      '--events',
      'user.locked,user.signed_up',
    ]);
    assert.equal(created.code, 2);
    assert.match(created.out, /--events: "user\.signed_up" \(did you mean user\.signed_in\?\) is not an event type/);
    const listed = await cli(['events', 'list', '--type', 'user.lockd']);
    assert.equal(listed.code, 2);
    assert.match(listed.out, /--type: "user\.lockd" \(did you mean user\.locked\?\)/);
  });
});
