// OpenID Connect Back-Channel Logout 1.0 at every other way a session ends, each heard by a relying
// party's receiver that verifies the logout token with `jose`: a password changed on the account page
// (the other sessions), a password reset by a mail's link, `users disable` and `users delete`, and the
// sign-in of someone else in the same browser. A step-up of the same person keeps the session's sid
// (as node-oidc-provider keeps it across a new login of the same account): nothing is posted for the
// session it replaces, and the ID token after it carries the same sid. On SQLite, and on PostgreSQL
// when it is reachable.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import * as OTPAuth from 'otpauth';
import { ACR_VALUES } from '../../src/authn/levels.ts';
import { run } from '../../src/cli/main.ts';
import { LogoutDelivery } from '../../src/logout/delivery.ts';
import { BrowserSim, unescapeHtml } from '../helpers/browser-sim.ts';
import { LogoutReceiver } from '../helpers/logout-receiver.ts';
import { Mailbox } from '../helpers/mailbox.ts';
import { newUser, passwordSignIn } from '../helpers/passkeys.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';
import { exchange } from '../helpers/tokens.ts';
import { type TestDatabase, withPostgresDatabase, withSqliteDatabase } from '../store/databases.ts';

type Person = Awaited<ReturnType<typeof newUser>>;

const silent = { info() {}, warn() {}, error() {} };
const CHOSEN = 'a brand new passphrase 42';

for (const kind of ['SQLite', 'PostgreSQL'] as const) {
  describe(`back-channel logout as sessions end (${kind})`, async () => {
    const database: TestDatabase | undefined =
      kind === 'SQLite' ? await withSqliteDatabase() : await withPostgresDatabase();
    const skip = !database && 'PostgreSQL unreachable';
    let server: TestServer;
    let receiver: LogoutReceiver;
    let delivery: LogoutDelivery;
    let mailbox: Mailbox;

    before(async () => {
      if (!database) return;
      server = await startServer({ databaseUrl: database.url, env: { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' } });
      mailbox = new Mailbox(server);
      receiver = new LogoutReceiver();
      await receiver.start(server.issuer);
      await cli(['clients', 'update', server.clients.confidential.id, '--backchannel-logout-uri', receiver.url]);
      // The worker on the server's clock, which the authenticator app's steps move on.
      const now = () => (server.clock.frozen ?? Math.floor(Date.now() / 1000)) + server.clock.offset;
      const options = { config: server.config, keys: server.keys, interval: 1, now, log: silent };
      delivery = new LogoutDelivery(server.store, options);
    });
    after(async () => {
      await mailbox?.close();
      await receiver?.stop();
      await server?.close();
      await database?.drop();
    });
    beforeEach(() => {
      if (database) receiver.tokens.length = 0;
    });

    async function cli(args: string[]): Promise<void> {
      const { io, lines } = cliIo(server);
      assert.equal(await run(args, io), 0, lines.join('\n'));
      server.store.clearCaches();
    }

    /** An authorization request of the confidential client from `browser` as `person`: the ID token's claims. */
    async function signIn(browser: BrowserSim, person: Person, extra: Record<string, string> = {}) {
      const client = server.clients.confidential;
      const query = new URLSearchParams({
        client_id: client.id,
        redirect_uri: client.redirectUri,
        response_type: 'code',
        scope: 'openid',
        state: 's',
        nonce: 'n',
        ...extra,
      });
      const callback = await browser.authorize(`${server.issuer}/oauth2/authorize?${query}`, person);
      return idToken(callback);
    }

    async function idToken(callback: URL) {
      const code = callback.searchParams.get('code');
      assert.ok(code, callback.href);
      const response = await exchange(server, { code, verifier: null, client: server.clients.confidential });
      return decodeJwt(((await response.json()) as { id_token: string }).id_token);
    }

    /** Posts what is due; the logout tokens received, as `sub sid`. */
    async function heard(): Promise<string[]> {
      while ((await delivery.runOnce()) > 0);
      assert.deepEqual(receiver.refused, []);
      return receiver.tokens.map((t) => `${String(t.payload.sub)} ${String(t.payload.sid)}`).sort();
    }

    it('a password changed on the account page tells the clients of the other sessions only', { skip }, async () => {
      const person = await newUser(server);
      const here = new BrowserSim(server.issuer);
      const elsewhere = new BrowserSim(server.issuer);
      await signIn(here, person);
      const other = await signIn(elsewhere, person);
      const page = await (await here.request('/account')).text();
      const form = { csrf: BrowserSim.hidden(page, 'csrf'), current: person.password, new: CHOSEN };
      assert.equal((await here.request('/account/password', { form })).status, 303);
      assert.deepEqual(await heard(), [`${person.id} ${String(other.sid)}`]);
    });

    it("a password reset by a mail's link tells the clients of every session", { skip }, async () => {
      const person = await newUser(server);
      const signedIn = await signIn(new BrowserSim(server.issuer), person);
      const browser = new BrowserSim(server.issuer);
      const asked = await (await browser.request('/reset/request')).text();
      const request = { csrf: BrowserSim.hidden(asked, 'csrf'), identifier: person.username };
      assert.equal((await browser.request('/reset/request', { form: request })).status, 200);
      const page = await (await browser.request(await mailbox.link(`${person.username}@example.com`))).text();
      const form = { csrf: BrowserSim.hidden(page, 'csrf'), token: BrowserSim.hidden(page, 'token') };
      assert.equal(
        (await browser.request('/reset', { form: { ...form, password: CHOSEN, confirm: CHOSEN } })).status,
        303,
      );
      assert.deepEqual(await heard(), [`${person.id} ${String(signedIn.sid)}`]);
    });

    it('users disable and users delete tell the clients', { skip }, async () => {
      const person = await newUser(server);
      const first = await signIn(new BrowserSim(server.issuer), person);
      await cli(['users', 'disable', person.username]);
      assert.deepEqual(await heard(), [`${person.id} ${String(first.sid)}`]);
      await cli(['users', 'enable', person.username]);
      receiver.tokens.length = 0;
      const second = await signIn(new BrowserSim(server.issuer), person);
      await cli(['users', 'delete', person.username]);
      assert.deepEqual(await heard(), [`${person.id} ${String(second.sid)}`]);
    });

    it(
      "someone else's sign-in in the same browser signs the first person out and tells the clients",
      { skip },
      async () => {
        const [first, second] = [await newUser(server), await newUser(server)];
        const browser = new BrowserSim(server.issuer);
        const before = await signIn(browser, first);
        const after = await signIn(browser, second, { prompt: 'login' });
        assert.equal(after.sub, second.id);
        assert.notEqual(after.sid, before.sid);
        assert.deepEqual(await heard(), [`${first.id} ${String(before.sid)}`]);
      },
    );

    it(
      'the same person signing in again keeps the sid: nothing is posted until the session ends',
      { skip },
      async () => {
        const person = await newUser(server);
        const browser = new BrowserSim(server.issuer);
        const first = await signIn(browser, person);
        const again = await signIn(browser, person, { prompt: 'login' });
        assert.equal(again.sid, first.sid);
        assert.deepEqual(await heard(), []);
        await cli(['users', 'sign-out', person.username]);
        assert.deepEqual(await heard(), [`${person.id} ${String(first.sid)}`]);
      },
    );

    it('a step-up to two factors keeps the sid, and the logout that follows tells it once', { skip }, async () => {
      const person = await newUser(server);
      const browser = new BrowserSim(server.issuer);
      const totp = await enrolApp(browser, person);
      // Signed in with the password alone, then the app turned on: the session is one factor.
      const plain = await signIn(browser, person);
      assert.equal(plain.acr, ACR_VALUES[0]);
      const step = await browser.authorize(
        `${server.issuer}/oauth2/authorize?${new URLSearchParams({
          client_id: server.clients.confidential.id,
          redirect_uri: server.clients.confidential.redirectUri,
          response_type: 'code',
          scope: 'openid',
          state: 's',
          nonce: 'n',
          acr_values: ACR_VALUES[1],
        })}`,
        person,
      );
      assert.equal(step.pathname, '/login/totp');
      const page = await (await browser.request(step.href)).text();
      const code = totp.generate({ timestamp: (Date.now() / 1000 + server.clock.offset) * 1000 });
      const form = { pending: step.searchParams.get('pending')!, csrf: BrowserSim.hidden(page, 'csrf'), code };
      const answer = await browser.request('/login/totp', { form });
      assert.equal(answer.status, 303);
      const stepped = await idToken(new URL(answer.headers.get('location')!, server.issuer));
      assert.equal(stepped.acr, ACR_VALUES[1]);
      assert.equal(stepped.sid, plain.sid);
      assert.deepEqual(await heard(), [], 'the replaced session is no logout');
      const html = await (await browser.request('/oauth2/logout')).text();
      const logout = { logout: BrowserSim.hidden(html, 'logout'), csrf: BrowserSim.hidden(html, 'csrf') };
      assert.equal((await browser.request('/logout', { form: logout })).status, 303);
      assert.deepEqual(await heard(), [`${person.id} ${String(plain.sid)}`]);
    });

    /** An authenticator app enrolled from the account page of `browser`, signed in as `person`. */
    async function enrolApp(browser: BrowserSim, person: Person): Promise<OTPAuth.TOTP> {
      assert.equal((await passwordSignIn(browser, person)).status, 303);
      const page = await (await browser.request('/account')).text();
      const uri = unescapeHtml(/<a href="(otpauth:\/\/totp\/[^"]+)"/.exec(page)![1]!);
      const totp = OTPAuth.URI.parse(uri) as OTPAuth.TOTP;
      const code = totp.generate({ timestamp: (Date.now() / 1000 + server.clock.offset) * 1000 });
      const form = { csrf: BrowserSim.hidden(page, 'csrf'), enrolment: BrowserSim.hidden(page, 'enrolment'), code };
      assert.equal((await browser.request('/account/totp', { form })).status, 200);
      // The next code is another one (a code works once).
      server.clock.offset += 30;
      return totp;
    }
  });
}
