// OpenID Connect Back-Channel Logout 1.0: a relying party's receiver that verifies each logout token
// with `jose` against the server's JWKS, as a relying party does; the sid of the ID token and of the
// logout token; RP-initiated logout and `tessera users sign-out`; a receiver down at first; a client
// without a backchannel_logout_uri. On SQLite, and on PostgreSQL when it is reachable.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { run } from '../../src/cli/main.ts';
import { LogoutDelivery } from '../../src/logout/delivery.ts';
import { BACKCHANNEL_LOGOUT_EVENT } from '../../src/oidc/logout-token.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { LogoutReceiver } from '../helpers/logout-receiver.ts';
import { cliIo, startServer, type TestClient, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';
import { type TestDatabase, withPostgresDatabase, withSqliteDatabase } from '../store/databases.ts';

async function cli(server: TestServer, args: string[]): Promise<string> {
  const { io, lines } = cliIo(server);
  const code = await run(args, io);
  assert.equal(code, 0, lines.join('\n'));
  server.store.clearCaches();
  return lines.join('\n');
}

const silent = { info() {}, warn() {}, error() {} };

for (const kind of ['SQLite', 'PostgreSQL'] as const) {
  describe(`back-channel logout (${kind})`, async () => {
    const database: TestDatabase | undefined =
      kind === 'SQLite' ? await withSqliteDatabase() : await withPostgresDatabase();
    const skip = !database && 'PostgreSQL unreachable';
    let server: TestServer;
    let receiver: LogoutReceiver;
    let delivery: LogoutDelivery;
    /** The worker's clock: the server's, `ahead` seconds later. */
    let ahead = 0;

    before(async () => {
      if (!database) return;
      server = await startServer({
        databaseUrl: database.url,
        env: { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true', TESSERA_REGISTRATION: 'open' },
      });
      receiver = new LogoutReceiver();
      await receiver.start(server.issuer);
      const c = server.clients.confidential;
      await cli(server, ['clients', 'update', c.id, '--backchannel-logout-uri', receiver.url]);
      await cli(server, ['clients', 'update', server.clients.es256.id, '--backchannel-logout-uri', receiver.url]);
      await cli(server, ['clients', 'update', server.clients.es256.id, '--backchannel-logout-session-required']);
      const now = () => Math.floor(Date.now() / 1000) + ahead;
      delivery = new LogoutDelivery(server.store, {
        config: server.config,
        keys: server.keys,
        interval: 1,
        now,
        log: silent,
      });
    });
    after(async () => {
      await receiver?.stop();
      await server?.close();
      await database?.drop();
    });
    // Each test starts with no session and nothing left to post.
    beforeEach(async () => {
      if (!database) return;
      receiver.status = 200;
      await cli(server, ['users', 'sign-out', 'alice']);
      while ((await delivery.runOnce()) > 0);
      receiver.tokens.length = 0;
    });

    async function signIn(browser: BrowserSim, client: TestClient) {
      const issued = await getCode(server, client, { browser, scope: 'openid', nonce: 'n-1' });
      const response = (await (await exchange(server, issued)).json()) as { id_token: string; refresh_token: string };
      return { idToken: decodeJwt(response.id_token), refreshToken: response.refresh_token };
    }

    async function rpLogout(browser: BrowserSim) {
      const html = await (await browser.request('/oauth2/logout')).text();
      const done = await browser.request('/logout', {
        form: { logout: BrowserSim.hidden(html, 'logout'), csrf: BrowserSim.hidden(html, 'csrf') },
      });
      assert.equal(done.status, 303);
    }

    it('discovery says back-channel logout with sid is supported', { skip }, async () => {
      const metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<
        string,
        unknown
      >;
      assert.equal(metadata.backchannel_logout_supported, true);
      assert.equal(metadata.backchannel_logout_session_supported, true);
      const shown = JSON.parse(await cli(server, ['clients', 'show', server.clients.es256.id, '--json'])) as Record<
        string,
        unknown
      >;
      assert.equal(shown.backchannel_logout_uri, receiver.url);
      assert.equal(shown.backchannel_logout_session_required, true);
    });

    it(
      'RP-initiated logout posts one logout token per client signed in from the session, with its sid',
      { skip },
      async () => {
        const browser = new BrowserSim(server.issuer);
        const c = server.clients.confidential;
        const signedIn = await signIn(browser, c);
        // Another client without a backchannel_logout_uri, signed in from the same session: told nothing.
        await signIn(browser, server.clients.public);
        const sid = signedIn.idToken.sid;
        assert.equal(typeof sid, 'string');
        // The same sid in every ID token of the session, and in a refreshed one.
        assert.equal((await signIn(browser, c)).idToken.sid, sid);
        const refreshed = (await (
          await tokenRequest(
            server,
            { grant_type: 'refresh_token', refresh_token: signedIn.refreshToken },
            basic(c.id, c.secret!),
          )
        ).json()) as { id_token: string };
        assert.equal(decodeJwt(refreshed.id_token).sid, sid);

        await rpLogout(browser);
        assert.equal(await delivery.runOnce(), 1);
        assert.equal(receiver.tokens.length, 1);
        const [{ header, payload }] = receiver.tokens as [(typeof receiver.tokens)[0]];
        assert.equal(header.typ, 'logout+jwt');
        assert.equal(payload.aud, c.id);
        assert.equal(payload.sub, server.user.id);
        assert.equal(payload.sid, sid);
        assert.deepEqual(payload.events, { [BACKCHANNEL_LOGOUT_EVENT]: {} });
        assert.equal(payload.nonce, undefined);
        assert.ok(payload.exp! - payload.iat! <= 120);
        // Delivered once: nothing more to post.
        assert.equal(await delivery.runOnce(), 0);
      },
    );

    it('users sign-out posts logout tokens for each session, sid-required clients included', { skip }, async () => {
      const first = new BrowserSim(server.issuer);
      const second = new BrowserSim(server.issuer);
      const a = (await signIn(first, server.clients.confidential)).idToken.sid;
      const b = (await signIn(second, server.clients.es256)).idToken.sid;
      assert.notEqual(a, b);
      await cli(server, ['users', 'sign-out', 'alice']);
      assert.equal(await delivery.runOnce(), 2);
      const got = receiver.tokens.map((t) => `${String(t.payload.aud)} ${String(t.payload.sid)}`).sort();
      assert.deepEqual(got, [`${server.clients.confidential.id} ${a}`, `${server.clients.es256.id} ${b}`].sort());
      assert.deepEqual(receiver.refused, []);
    });

    it('an operator resetting the password or the second factors tells the clients too', { skip }, async () => {
      const sid = (await signIn(new BrowserSim(server.issuer), server.clients.confidential)).idToken.sid;
      await cli(server, ['users', 'mfa', 'reset', 'alice']);
      assert.equal(await delivery.runOnce(), 1);
      assert.equal(receiver.tokens[0]!.payload.sid, sid);
      const again = (await signIn(new BrowserSim(server.issuer), server.clients.confidential)).idToken.sid;
      const { io, lines } = cliIo(server, `${server.user.password}\n`);
      assert.equal(await run(['users', 'set-password', 'alice', '--password-stdin'], io), 0, lines.join('\n'));
      assert.equal(await delivery.runOnce(), 1);
      assert.equal(receiver.tokens[1]!.payload.sid, again);
    });

    it('users sign-out --session tells the clients of that session only', { skip }, async () => {
      const browser = new BrowserSim(server.issuer);
      const other = new BrowserSim(server.issuer);
      const sid = (await signIn(browser, server.clients.confidential)).idToken.sid;
      await signIn(other, server.clients.confidential);
      const sessions = JSON.parse(await cli(server, ['users', 'sessions', 'alice', '--json'])) as Array<{
        session: string;
      }>;
      assert.equal(sessions.length, 2);
      // Which listed session is whose: end each in turn until the one with `sid` was told.
      await cli(server, ['users', 'sign-out', 'alice', '--session', sessions[0]!.session]);
      assert.equal(await delivery.runOnce(), 1);
      assert.equal(receiver.tokens.length, 1);
      await cli(server, ['users', 'sign-out', 'alice', '--session', sessions[1]!.session]);
      assert.equal(await delivery.runOnce(), 1);
      assert.ok(receiver.tokens.some((t) => t.payload.sid === sid));
      assert.notEqual(receiver.tokens[0]!.payload.sid, receiver.tokens[1]!.payload.sid);
    });

    it('a receiver that is down at first gets the logout token on the retry', { skip }, async () => {
      const browser = new BrowserSim(server.issuer);
      const sid = (await signIn(browser, server.clients.confidential)).idToken.sid;
      receiver.status = 503;
      await rpLogout(browser);
      assert.equal(await delivery.runOnce(), 1);
      assert.equal(receiver.tokens.length, 0);
      const pending = (await server.store.listLogoutDeliveries(100)).filter((d) => d.status === 'pending');
      assert.equal(pending.length, 1);
      assert.equal(pending[0]!.attempts, 1);
      // Not due before the retry schedule says (5 s).
      assert.equal(await delivery.runOnce(), 0);
      receiver.status = 200;
      ahead += 6;
      assert.equal(await delivery.runOnce(), 1);
      assert.equal(receiver.tokens.length, 1);
      assert.equal(receiver.tokens[0]!.payload.sid, sid);
      const delivered = (await server.store.listLogoutDeliveries(100)).find((d) => d.id === pending[0]!.id);
      assert.equal(delivered!.status, 'delivered');
      assert.equal(delivered!.attempts, 2);
    });

    it('a client without a backchannel_logout_uri gets none', { skip }, async () => {
      const browser = new BrowserSim(server.issuer);
      await signIn(browser, server.clients.public);
      await rpLogout(browser);
      assert.equal(await delivery.runOnce(), 0);
      assert.equal(receiver.tokens.length, 0);
    });

    it(
      'a client registering itself sets backchannel_logout_uri; one that is not https is refused',
      { skip },
      async () => {
        const register = (metadata: Record<string, unknown>) =>
          fetch(`${server.issuer}/oauth2/register`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ client_name: 'RP', redirect_uris: ['https://rp.example/cb'], ...metadata }),
          });
        const registered = await register({
          backchannel_logout_uri: 'https://rp.example/bcl',
          backchannel_logout_session_required: true,
        });
        assert.equal(registered.status, 201);
        const body = (await registered.json()) as Record<string, unknown>;
        assert.equal(body.backchannel_logout_uri, 'https://rp.example/bcl');
        assert.equal(body.backchannel_logout_session_required, true);
        const shown = JSON.parse(await cli(server, ['clients', 'show', String(body.client_id), '--json'])) as Record<
          string,
          unknown
        >;
        assert.equal(shown.backchannel_logout_uri, 'https://rp.example/bcl');
        const refused = await register({ backchannel_logout_uri: 'http://rp.example/bcl' });
        assert.equal(refused.status, 400);
        assert.deepEqual(await refused.json(), {
          error: 'invalid_client_metadata',
          error_description: 'backchannel_logout_uri must be an https URL',
        });
      },
    );

    it('clients update refuses a backchannel_logout_uri that is not https', { skip }, async () => {
      const { io, lines } = cliIo(server);
      const code = await run(
        ['clients', 'update', server.clients.public.id, '--backchannel-logout-uri', 'http://rp.example/bcl'],
        io,
      );
      assert.notEqual(code, 0);
      assert.match(lines.join('\n'), /--backchannel-logout-uri: "http:\/\/rp\.example\/bcl" must be an https URL/);
    });
  });
}
