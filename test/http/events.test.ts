// The audit trail: each security event with its time, type, user, client, source address and user
// agent, and never a secret; written with the change it records; none for issuing tokens; listed by
// `tessera events list`; removed by housekeeping after TESSERA_EVENT_RETENTION.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { CLI, type SecurityEvent, securityEvent } from '../../src/events/index.ts';
import { purgeOnce } from '../../src/store/housekeeping.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startServer, type TestServer, cliIo } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';

for (const kind of ['SQLite', 'PostgreSQL'] as const) {
  describe(`the audit trail (${kind})`, async () => {
    const database: TestDatabase | undefined = kind === 'PostgreSQL' ? await withPostgresDatabase() : undefined;
    const skip = kind === 'PostgreSQL' && !database && 'PostgreSQL unreachable';
    let server: TestServer;
    before(async () => {
      if (!skip) server = await startServer(database ? { databaseUrl: database.url } : {});
    });
    after(async () => {
      await server?.close();
      await database?.drop();
    });

    const events = () => server.store.listEvents({ limit: 1000 });
    const newest = async (type: SecurityEvent['type']) => (await server.store.listEvents({ type, limit: 1 }))[0];

    it('sign-in, consent, a failed sign-in, sign-out: who, from where, with which client', { skip }, async () => {
      const c = server.clients.confidential;
      const browser = new BrowserSim(server.issuer);
      const code = await getCode(server, c, { browser, scope: 'openid apps' });
      const signedIn = (await newest('user.signed_in'))!;
      assert.equal(signedIn.userId, server.user.id);
      assert.equal(signedIn.clientId, c.id);
      assert.equal(signedIn.ip, '127.0.0.1');
      assert.equal(signedIn.userAgent, 'node');
      const consent = (await newest('consent.granted'))!;
      assert.deepEqual(
        [consent.userId, consent.clientId, consent.data],
        [server.user.id, c.id, { scopes: ['openid', 'apps'] }],
      );

      // Issuing tokens records nothing.
      const before = (await events()).length;
      const tokens = (await (await exchange(server, code)).json()) as { refresh_token: string; id_token: string };
      const refreshed = await tokenRequest(
        server,
        { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
        basic(c.id, c.secret!),
      );
      assert.equal(refreshed.status, 200);
      assert.equal((await events()).length, before);

      const other = new BrowserSim(server.issuer);
      const loginPage = await (await other.request('/account/login')).text();
      await other.request('/account/login', {
        form: { csrf: BrowserSim.hidden(loginPage, 'csrf'), username: 'alice', password: 'not the password' },
      });
      const failed = (await newest('user.sign_in_failed'))!;
      assert.deepEqual(
        [failed.userId, failed.clientId, failed.data],
        [server.user.id, null, { reason: 'wrong_password' }],
      );
      await other.request('/account/login', {
        form: { csrf: BrowserSim.hidden(loginPage, 'csrf'), username: 'nobody-here', password: 'x' },
      });
      const unknown = (await newest('user.sign_in_failed'))!;
      assert.deepEqual([unknown.userId, unknown.data], [null, { reason: 'unknown_user' }]);

      const logout = await browser.request(
        `/oauth2/logout?${new URLSearchParams({ id_token_hint: tokens.id_token, client_id: c.id })}`,
      );
      const html = await logout.text();
      await browser.request('/logout', {
        form: { logout: BrowserSim.hidden(html, 'logout'), csrf: BrowserSim.hidden(html, 'csrf') },
      });
      assert.equal((await newest('user.signed_out'))!.userId, server.user.id);

      // Never a secret: no password, token, code or client secret in any event.
      const all = JSON.stringify(await events());
      for (const secret of [server.user.password, 'not the password', tokens.refresh_token, code.code, c.secret!]) {
        assert.ok(!all.includes(secret), 'an event holds a secret');
      }
    });

    it('a replayed code, a reused refresh token and revocations', { skip }, async () => {
      const c = server.clients.confidential;
      const code = await getCode(server, c);
      assert.equal((await exchange(server, code)).status, 200);
      assert.equal((await exchange(server, code)).status, 400);
      const replay = (await newest('code.replayed'))!;
      assert.deepEqual([replay.userId, replay.clientId, replay.ip], [server.user.id, c.id, '127.0.0.1']);

      const second = (await (await exchange(server, await getCode(server, c))).json()) as { refresh_token: string };
      const refresh = (token: string) =>
        tokenRequest(server, { grant_type: 'refresh_token', refresh_token: token }, basic(c.id, c.secret!));
      assert.equal((await refresh(second.refresh_token)).status, 200);
      assert.equal((await refresh(second.refresh_token)).status, 400);
      const reuse = (await newest('refresh_token.reused'))!;
      assert.equal(reuse.data?.presented, 'generation 1 of 2');

      const revoke = (token: string) =>
        fetch(`${server.issuer}/oauth2/revoke`, {
          method: 'POST',
          headers: { authorization: basic(c.id, c.secret!), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }),
        });
      // The replay revoked the first grant: revoke a live one's tokens.
      const live = (await (await exchange(server, await getCode(server, c))).json()) as {
        access_token: string;
        refresh_token: string;
      };
      await revoke(live.access_token);
      assert.equal((await newest('token.revoked'))!.data?.token, 'access_token');
      await revoke(live.refresh_token);
      assert.equal((await newest('token.revoked'))!.data?.token, 'refresh_token');
    });

    it('an event is written with its change, or not at all', { skip }, async () => {
      const existing = (await server.store.getClient(server.clients.confidential.id))!;
      const now = Math.floor(Date.now() / 1000);
      const created = securityEvent('client.created', now, { clientId: existing.clientId, requester: CLI });
      const before = (await server.store.listEvents({ type: 'client.created' })).length;
      await assert.rejects(server.store.createClient(existing, created));
      assert.equal((await server.store.listEvents({ type: 'client.created' })).length, before);
      const user = (await server.store.getUserById(server.user.id))!;
      const disabled = securityEvent('user.disabled', now, { userId: user.id, requester: CLI });
      assert.ok(await server.store.setUserDisabled(user.id, false, now, disabled));
      assert.deepEqual(
        (await server.store.listEvents({ type: 'user.disabled' })).map((e) => e.id),
        [disabled.id],
      );
    });

    it(
      'tessera events list filters by user, client, type and time; housekeeping removes old events',
      { skip },
      async () => {
        const { lines, io } = cliIo(server);
        assert.equal(await run(['events', 'list', '--user', 'alice', '--type', 'user.signed_in', '--json'], io), 0);
        const listed = JSON.parse(lines.join('\n')) as Array<{ type: string; user_id: string; at: string }>;
        assert.ok(
          listed.length > 0 && listed.every((e) => e.type === 'user.signed_in' && e.user_id === server.user.id),
        );
        assert.ok(
          listed.every((e) => !Number.isNaN(Date.parse(e.at))),
          'ISO times',
        );
        lines.length = 0;
        assert.equal(await run(['events', 'list', '--client', server.clients.confidential.id, '--since', '1h'], io), 0);
        assert.match(lines.join('\n'), /consent\.granted\s+alice/);
        lines.length = 0;
        assert.equal(await run(['events', 'list', '--since', '2099-01-01'], io), 0);
        assert.deepEqual(lines, ['no events']);
        assert.equal(await run(['events', 'list', '--type', 'token.issued'], io), 2);

        // What the CLI changes is recorded too, with the command as the user agent.
        const cli = { ...io, stdin: async () => 'a passphrase long enough\n' };
        assert.equal(
          await run(['users', 'create', '--username', 'bob', '--email', 'b@example.com', '--password-stdin'], cli),
          0,
        );
        assert.equal(await run(['users', 'set-password', 'bob', '--password-stdin'], cli), 0);
        assert.equal(await run(['users', 'disable', 'bob'], cli), 0);
        assert.equal(await run(['clients', 'rotate-secret', server.clients.post.id], io), 0);
        assert.equal(await run(['clients', 'delete', server.clients.narrow.id], io), 0);
        const recorded = await server.store.listEvents({ limit: 5 });
        assert.deepEqual(
          recorded.map((e) => [e.type, e.ip, e.userAgent]).reverse(),
          ['user.created', 'user.password_changed', 'user.disabled', 'client.secret_rotated', 'client.deleted'].map(
            (type) => [type, null, 'tessera CLI'],
          ),
        );

        const now = Math.floor(Date.now() / 1000);
        const count = (await events()).length;
        assert.ok(count > 0);
        await purgeOnce(server.store, server.config, now + server.config.eventRetention - 3600);
        assert.equal((await events()).length, count, 'kept for the retention');
        const purged = await purgeOnce(server.store, server.config, now + server.config.eventRetention + 60);
        assert.equal(purged.events, count);
        assert.equal((await events()).length, 0);
      },
    );
  });
}
