// An operator's day-2 commands, run as an operator would: `users update` (an email change
// unverifies, conflicts refused, the new username signs in), `users list --search --limit --cursor`
// (pages that hold under inserts), `users sign-out --session` (one browser signed out), `grants
// revoke --client` (every user's refresh tokens of one client stop), each with its event.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { commandLine } from '../helpers/cli.ts';
import { newUser } from '../helpers/passkeys.ts';
import { startServer, type TestClient, type TestServer } from '../helpers/server.ts';
import { basic, tokenRequest } from '../helpers/tokens.ts';

describe("an operator's commands for users, sessions and grants", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server?.close());

  const { cli, json } = commandLine(() => server);
  const eventsOf = (userId: string, type: Parameters<TestServer['store']['listEvents']>[0]['type']) =>
    server.store.listEvents({ userId, ...(type ? { type } : {}) });

  /** `user` signs in to `client` in `browser` and consents: the tokens. */
  async function tokensOf(user: { username: string; password: string }, client: TestClient, browser?: BrowserSim) {
    const verifier = randomBytes(32).toString('base64url');
    const params = new URLSearchParams({
      client_id: client.id,
      redirect_uri: client.redirectUri,
      response_type: 'code',
      scope: 'openid',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const b = browser ?? new BrowserSim(server.issuer);
    const callback = await b.authorize(`${server.issuer}/oauth2/authorize?${params}`, user);
    const form = {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: client.redirectUri,
      code_verifier: verifier,
    };
    const response = await tokenRequest(server, form, basic(client.id, client.secret!));
    assert.equal(response.status, 200);
    return (await response.json()) as { refresh_token: string; access_token: string };
  }
  const refresh = (client: TestClient, token: string) =>
    tokenRequest(server, { grant_type: 'refresh_token', refresh_token: token }, basic(client.id, client.secret!));

  it('users update: an email change unverifies, --email-verified vouches, a new username signs in', async () => {
    const user = await newUser(server);
    const changed = await cli(['users', 'update', user.username, '--email', 'new@example.org', '--name', 'Ada L.']);
    assert.equal(changed.code, 0, changed.out);
    assert.match(changed.out, /updated .*: email, email_verified, name/);
    assert.match(changed.out, /new@example\.org is unverified until the user confirms it/);
    let shown = await json(['users', 'show', user.username]);
    assert.deepEqual([shown.email, shown.email_verified, shown.name], ['new@example.org', false, 'Ada L.']);
    const [updated] = await eventsOf(user.id, 'user.updated');
    assert.deepEqual(updated?.data, { changed: ['email', 'email_verified', 'name'] });

    assert.equal((await cli(['users', 'update', user.username, '--email-verified'])).code, 0);
    const [verified] = await eventsOf(user.id, 'user.email_verified');
    assert.deepEqual(verified?.data, { changed: false, by: 'operator' });
    const vouched = await json(['users', 'update', user.username, '--email', 'ada@example.org', '--email-verified']);
    assert.deepEqual([vouched.email, vouched.email_verified, vouched.changed], ['ada@example.org', true, ['email']]);
    const [again] = await eventsOf(user.id, 'user.email_verified');
    assert.deepEqual(again?.data, { changed: true, by: 'operator' }, 'as the link would: the new address is told');

    const renamed = `${user.username}-renamed`;
    assert.equal((await cli(['users', 'update', user.username, '--username', renamed])).code, 0);
    const [rename] = await eventsOf(user.id, 'user.updated');
    assert.deepEqual(rename?.data, { changed: ['username'], previous_username: user.username, username: renamed });
    shown = await json(['users', 'show', renamed]);
    assert.equal(shown.id, user.id);
    const c = server.clients.confidential;
    await tokensOf({ username: renamed, password: user.password }, c);
    const old = await new BrowserSim(server.issuer)
      .authorize(
        `${server.issuer}/oauth2/authorize?${new URLSearchParams({ client_id: c.id, redirect_uri: c.redirectUri, response_type: 'code', scope: 'openid' })}`,
        user,
      )
      .catch((err: Error) => err);
    assert.ok(old instanceof Error, 'the old username signs in no more');

    assert.deepEqual((await json(['users', 'update', renamed, '--name', 'Ada L.'])).changed, []);
    assert.match((await cli(['users', 'update', renamed, '--name', 'Ada L.'])).out, /nothing to change/);
  });

  it('users update refuses a taken username or address, a bad value, an unknown user, no change', async () => {
    const [a, b] = [await newUser(server), await newUser(server)];
    const taken = await cli(['users', 'update', a.username, '--username', b.username]);
    assert.equal(taken.code, 2);
    assert.match(taken.out, new RegExp(`--username: a user named ${b.username} exists already`));
    const address = await cli(['users', 'update', a.username, '--email', `${b.username.toUpperCase()}@example.com`]);
    assert.equal(address.code, 2);
    assert.match(address.out, new RegExp(`is the address of another user \\(${b.username}\\)`));
    assert.equal((await cli(['users', 'update', a.username, '--username', 'has space'])).code, 2);
    assert.equal((await cli(['users', 'update', a.username, '--email', 'not-an-address'])).code, 2);
    const none = await cli(['users', 'update', 'nobody-at-all', '--name', 'N']);
    assert.equal(none.code, 1);
    assert.match(none.out, /no user nobody-at-all/);
    assert.match((await cli(['users', 'update', a.username])).out, /users update needs a change/);
    assert.equal((await json(['users', 'show', a.username])).email, `${a.username}@example.com`, 'unchanged');
    assert.deepEqual(await eventsOf(a.id, 'user.updated'), []);
  });

  it('users list --search --limit --cursor: pages in username order that inserts do not shift', async () => {
    const tag = `pg${randomBytes(3).toString('hex')}`;
    for (const n of [1, 2, 3, 4, 5]) {
      assert.equal(
        (await cli(['users', 'create', '--username', `${tag}-${n}`, '--email', `${tag}${n}@example.com`])).code,
        0,
      );
    }
    assert.equal(
      (
        await cli([
          'users',
          'create',
          '--username',
          'zed',
          '--email',
          'z@example.com',
          '--name',
          `Z ${tag.toUpperCase()}`,
        ])
      ).code,
      0,
    );
    const all = await json(['users', 'list', '--search', tag.toUpperCase()]);
    assert.deepEqual(
      all.map((u: { username: string }) => u.username),
      [1, 2, 3, 4, 5].map((n) => `${tag}-${n}`).concat('zed'),
      'username, email or name, in any letter case; a plain array without --limit',
    );

    const first = await json(['users', 'list', '--search', tag, '--limit', '2']);
    assert.deepEqual(
      first.users.map((u: { username: string }) => u.username),
      [`${tag}-1`, `${tag}-2`],
    );
    assert.equal(typeof first.next_cursor, 'string');
    // Someone is added before the cursor, and someone after it: the next page neither repeats nor skips.
    await cli(['users', 'create', '--username', `${tag}-0`, '--email', `${tag}0@example.com`]);
    await cli(['users', 'create', '--username', `${tag}-3a`, '--email', `${tag}3a@example.com`]);
    const second = await json(['users', 'list', '--search', tag, '--limit', '2', '--cursor', first.next_cursor]);
    assert.deepEqual(
      second.users.map((u: { username: string }) => u.username),
      [`${tag}-3`, `${tag}-3a`],
    );
    const text = await cli(['users', 'list', '--search', tag, '--limit', '2', '--cursor', second.next_cursor]);
    assert.equal(text.code, 0);
    const next = /^more: --cursor (\S+)$/m.exec(text.out);
    assert.ok(next, `the cursor of the next page is printed:\n${text.out}`);
    assert.match(text.out, new RegExp(`${tag}-4 .*\\n.*${tag}-5 `));
    const last = await json(['users', 'list', '--search', tag, '--limit', '2', '--cursor', next[1]!]);
    assert.deepEqual([last.users.map((u: { username: string }) => u.username), last.next_cursor], [['zed'], null]);

    assert.deepEqual(await json(['users', 'list', '--search', '%']), [], 'LIKE characters match themselves');
    assert.match((await cli(['users', 'list', '--search', 'no-such-text'])).out, /no users match "no-such-text"/);
    assert.equal((await cli(['users', 'list', '--cursor', 'not a cursor'])).code, 2);
    assert.equal((await cli(['users', 'list', '--limit', '0'])).code, 2);
    assert.equal((await cli(['users', 'list', '--limit', 'ten'])).code, 2);
  });

  it('users sign-out --session ends that session only, as signing out in that browser', async () => {
    const user = await newUser(server);
    const c = server.clients.confidential;
    const [laptop, phone] = [new BrowserSim(server.issuer), new BrowserSim(server.issuer)];
    await tokensOf(user, c, laptop);
    // The phone signs in later (the server's clock moves), so its session is listed first.
    server.clock.offset += 5;
    const phoneTokens = await tokensOf(user, c, phone).finally(() => (server.clock.offset -= 5));
    const sessions = await json(['users', 'sessions', user.username]);
    assert.equal(sessions.length, 2);
    // The newest first: the phone's.
    const out = await cli(['users', 'sign-out', user.username, '--session', sessions[0].session]);
    assert.equal(out.code, 0, out.out);
    assert.match(out.out, new RegExp(`out of session ${sessions[0].session}; applications keep their access`));
    assert.equal((await phone.request('/account')).headers.get('location'), '/account/login', 'signed out');
    assert.equal((await laptop.request('/account')).status, 200, 'the other session stays');
    assert.deepEqual(
      (await json(['users', 'sessions', user.username])).map((s: { session: string }) => s.session),
      [sessions[1].session],
    );
    assert.equal((await refresh(c, phoneTokens.refresh_token)).status, 200, 'grants stay');
    const [signedOut] = await eventsOf(user.id, 'user.signed_out');
    assert.deepEqual(signedOut?.data, { session: sessions[0].session });

    assert.equal((await cli(['users', 'sign-out', user.username, '--session', sessions[0].session])).code, 1);
    assert.equal((await cli(['users', 'sign-out', user.username, '--session', 'zz'])).code, 2);
    assert.equal(
      (await cli(['users', 'sign-out', user.username, '--session', sessions[1].session, '--grants'])).code,
      2,
    );
  });

  it("grants revoke --client: every user's grants of the client stop, other clients' stay; one event", async () => {
    const [ann, bob] = [await newUser(server), await newUser(server)];
    const c = server.clients.confidential;
    const other = server.clients.narrow;
    const annTokens = await tokensOf(ann, c);
    const bobTokens = await tokensOf(bob, c);
    const annOther = await tokensOf(ann, other);

    const out = await cli(['grants', 'revoke', '--client', c.id]);
    assert.equal(out.code, 0, out.out);
    assert.match(out.out, /revoked [2-9]\d* grant\(s\) of client .*, of every user, and forgot their consents/);
    for (const tokens of [annTokens, bobTokens]) {
      const refused = await refresh(c, tokens.refresh_token);
      assert.equal(refused.status, 400);
      assert.equal(((await refused.json()) as { error: string }).error, 'invalid_grant');
    }
    const introspected = await fetch(`${server.issuer}/oauth2/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(c.id, c.secret!) },
      body: new URLSearchParams({ token: annTokens.access_token }),
    });
    assert.deepEqual(await introspected.json(), { active: false }, 'access tokens turn inactive');
    assert.equal((await refresh(other, annOther.refresh_token)).status, 200, "another client's grants stay");
    assert.deepEqual(
      (await json(['grants', 'list', '--user', ann.username])).map((g: { client_id: string }) => g.client_id),
      [other.id],
    );
    const [event] = await server.store.listEvents({ clientId: c.id, type: 'client.grants_revoked' });
    assert.deepEqual([event?.userId, event?.data], [null, { every_user: true }]);
    // The consent was forgotten: the next sign-in asks again.
    const browser = new BrowserSim(server.issuer);
    const params = new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      response_type: 'code',
      scope: 'openid',
    });
    const login = (await browser.request(`/oauth2/authorize?${params}`)).headers.get('location')!;
    const signedIn = await browser.login(login, ann.username, ann.password);
    assert.match(signedIn.headers.get('location') ?? '', /^\/consent/);

    const unknown = await cli(['grants', 'revoke', '--client', 'no-such-client']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.out, /no client no-such-client/);
  });
});
