// The device grant's polling (RFC 8628 §3.4, §3.5) over HTTP, on SQLite and on PostgreSQL: the
// device authorization endpoint's answers and errors, authorization_pending, slow_down growing the
// interval by 5 seconds, access_denied, expired_token, a device code of another client, the tokens
// once and a code used twice (two polls at once: exactly one gets tokens). The person's answer is
// written through the store here (the verification page is driven in Chromium in device.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient } from '../../src/admin/clients.ts';
import { securityEvent } from '../../src/events/index.ts';
import { DEVICE_CODE_GRANT } from '../../src/oauth/grant-types.ts';
import { userCodeHash } from '../../src/oauth/device/user-code.ts';
import { purgeOnce } from '../../src/store/housekeeping.ts';
import { run } from '../../src/cli/main.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';
import { basic } from '../helpers/tokens.ts';
import { type TestDatabase, withPostgresDatabase } from '../store/databases.ts';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

const post = async (server: TestServer, path: string, form: Record<string, string>, auth?: string): Promise<Answer> => {
  const response = await fetch(`${server.issuer}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(auth ? { authorization: auth } : {}) },
    body: new URLSearchParams(form),
  });
  assert.equal(response.headers.get('cache-control'), 'no-store');
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

for (const kind of ['SQLite', 'PostgreSQL'] as const) {
  describe(`device grant polling (${kind})`, async () => {
    const database: TestDatabase | undefined = kind === 'PostgreSQL' ? await withPostgresDatabase() : undefined;
    const skip = kind === 'PostgreSQL' && !database && 'PostgreSQL unreachable';
    let server: TestServer;
    let device: { id: string };
    let other: { id: string };
    let tv: { id: string; secret: string };

    before(async () => {
      if (skip) return;
      server = await startServer(database ? { databaseUrl: database.url } : {});
      const grantTypes = [DEVICE_CODE_GRANT, 'refresh_token'];
      const scopes = ['openid', 'profile', 'apps'];
      const made = await createClient(server.store, server.config, {
        name: 'Terminal',
        redirectUris: [],
        scopes,
        public: true,
        grantTypes,
      });
      device = { id: made.client.clientId };
      const input = { name: 'Another terminal', redirectUris: [], scopes, public: true, grantTypes };
      other = { id: (await createClient(server.store, server.config, input)).client.clientId };
      const confidential = await createClient(server.store, server.config, {
        name: 'Television',
        redirectUris: [],
        scopes,
        public: false,
        grantTypes: [DEVICE_CODE_GRANT],
      });
      tv = { id: confidential.client.clientId, secret: confidential.clientSecret! };
    });
    after(async () => {
      await server?.close();
      await database?.drop();
    });

    const now = () => (server.clock.frozen ?? Math.floor(Date.now() / 1000)) + server.clock.offset;
    const start = async (form: Record<string, string> = {}, auth?: string) =>
      post(server, '/oauth2/device_authorization', { client_id: device.id, scope: 'openid profile', ...form }, auth);
    const poll = (deviceCode: string, clientId = device.id, auth?: string) =>
      post(
        server,
        '/oauth2/token',
        { grant_type: DEVICE_CODE_GRANT, device_code: deviceCode, ...(auth ? {} : { client_id: clientId }) },
        auth,
      );
    /** The person's answer, as the verification page writes it. */
    const decide = async (userCode: string, status: 'approved' | 'denied') => {
      const found = await server.store.getDeviceAuthorizationByUserCode(userCodeHash(userCode.replace('-', '')));
      const at = now();
      const event = securityEvent(`device_authorization.${status}`, at, { userId: server.user.id });
      const decision = { status, userId: server.user.id, authTime: at, amr: 'pwd', acr: null, sid: null };
      return server.store.decideDeviceAuthorization(found!.id, decision, at, event);
    };

    it('answers the codes, the pages and the interval; stores neither code', { skip }, async () => {
      const { status, body } = await start();
      assert.equal(status, 200);
      assert.deepEqual(Object.keys(body).sort(), [
        'device_code',
        'expires_in',
        'interval',
        'user_code',
        'verification_uri',
        'verification_uri_complete',
      ]);
      assert.match(body.user_code as string, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
      assert.equal(body.verification_uri, `${server.issuer}/device`);
      assert.equal(body.verification_uri_complete, `${server.issuer}/device?user_code=${body.user_code}`);
      assert.equal(body.expires_in, 600);
      assert.equal(body.interval, 5);
      const db = await server.db();
      const rows = await db.selectFrom('device_authorizations').selectAll().execute();
      const stored = JSON.stringify(rows);
      assert.ok(!stored.includes(body.device_code as string));
      assert.ok(!stored.includes((body.user_code as string).replace('-', '')));
      const metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<
        string,
        unknown
      >;
      assert.equal(metadata.device_authorization_endpoint, `${server.issuer}/oauth2/device_authorization`);
      assert.ok((metadata.grant_types_supported as string[]).includes(DEVICE_CODE_GRANT));
    });

    it('the CLI makes device clients, public and confidential, with no redirect URI', { skip }, async () => {
      const create = async (...args: string[]) => {
        const { io, lines } = cliIo(server);
        const base = ['clients', 'create', '--name', 'Kiosk', '--scope', 'openid', '--json'];
        const status = await run([...base, '--grant-types', DEVICE_CODE_GRANT, ...args], io);
        return { status, lines };
      };
      const kiosk = await create('--public');
      assert.equal(kiosk.status, 0, kiosk.lines.join('\n'));
      const made = JSON.parse(kiosk.lines.join('\n')) as { client_id: string; grant_types: string[] };
      assert.deepEqual(made.grant_types, [DEVICE_CODE_GRANT]);
      assert.equal((await start({ client_id: made.client_id, scope: 'openid' })).status, 200);
      assert.equal((await create()).status, 0);
      // refresh_token comes with a person's grant: not with client_credentials alone.
      const { io, lines } = cliIo(server);
      const bare = [
        'clients',
        'create',
        '--name',
        'X',
        '--scope',
        'apps',
        '--grant-types',
        'client_credentials,refresh_token',
      ];
      assert.equal(await run(bare, io), 2);
      assert.match(lines.join('\n'), new RegExp(`refresh_token comes with authorization_code or ${DEVICE_CODE_GRANT}`));
    });

    it('refuses what the authorization endpoint refuses, and clients without the grant', { skip }, async () => {
      assert.deepEqual(await start({ scope: 'openid webhooks' }), {
        status: 400,
        body: { error: 'invalid_scope', error_description: 'scope asks for more than the client is registered for' },
      });
      assert.equal((await start({ scope: '' })).body.error, 'invalid_request');
      assert.equal((await start({ resource: 'https://api.example/unknown' })).body.error, 'invalid_target');
      const code = server.clients.public;
      assert.deepEqual(await start({ client_id: code.id }), {
        status: 400,
        body: {
          error: 'unauthorized_client',
          error_description: 'the client is not allowed to use the device authorization grant',
        },
      });
      assert.equal((await start({ client_id: 'nobody' })).status, 401);
      // A confidential client authenticates as at the token endpoint.
      assert.equal((await start({ client_id: tv.id })).body.error, 'invalid_client');
      const wrong = basic(tv.id, 'not the secret');
      assert.equal((await post(server, '/oauth2/device_authorization', { scope: 'openid' }, wrong)).status, 401);
    });

    it('pending, then slow_down growing the interval by 5 s, then the tokens once', { skip }, async (t) => {
      server.clock.frozen = Math.floor(Date.now() / 1000);
      t.after(() => {
        delete server.clock.frozen;
      });
      const started = (await start({ scope: 'openid profile apps' })).body;
      const deviceCode = started.device_code as string;
      assert.deepEqual(await poll(deviceCode), {
        status: 400,
        body: { error: 'authorization_pending', error_description: 'the user has not yet answered' },
      });
      // Sooner than 5 s: slow_down, and the interval is 10 s from now on; sooner again, 15 s.
      assert.deepEqual(await poll(deviceCode), {
        status: 400,
        body: {
          error: 'slow_down',
          error_description: 'polled sooner than the interval: wait 10 seconds between polls',
        },
      });
      server.clock.offset += 6;
      assert.equal(
        (await poll(deviceCode)).body.error_description,
        'polled sooner than the interval: wait 15 seconds between polls',
      );
      server.clock.offset += 15;
      assert.equal((await poll(deviceCode)).body.error, 'authorization_pending');
      server.clock.offset += 14;
      assert.equal((await poll(deviceCode)).body.error, 'slow_down');
      // Another client's poll with this device code: as good as none.
      assert.deepEqual(await poll(deviceCode, other.id), {
        status: 400,
        body: { error: 'invalid_grant', error_description: 'the device code is invalid' },
      });

      assert.equal(await decide(started.user_code as string, 'approved'), true);
      // Decided once: a second answer changes nothing.
      assert.equal(await decide(started.user_code as string, 'denied'), false);
      // Two polls at once: one gets the tokens, the other invalid_grant.
      const both = await Promise.all([poll(deviceCode), poll(deviceCode)]);
      const won = both.filter((a) => a.status === 200);
      assert.equal(won.length, 1);
      const tokens = won[0]!.body;
      assert.equal(tokens.token_type, 'Bearer');
      assert.equal(tokens.scope, 'openid profile apps');
      assert.equal(typeof tokens.refresh_token, 'string');
      const claims = JSON.parse(Buffer.from((tokens.id_token as string).split('.')[1]!, 'base64url').toString());
      assert.equal(claims.sub, server.user.id);
      assert.equal(claims.aud, device.id);
      assert.deepEqual(claims.amr, ['pwd']);
      assert.deepEqual(
        both.find((a) => a.status !== 200),
        { status: 400, body: { error: 'invalid_grant', error_description: 'the device code has already been used' } },
      );
      assert.equal((await poll(deviceCode)).body.error, 'invalid_grant');
      // The refresh token works as any other.
      const refreshed = await post(server, '/oauth2/token', {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token as string,
        client_id: device.id,
      });
      assert.equal(refreshed.status, 200);
      assert.equal(refreshed.body.scope, 'openid profile apps');
    });

    it('denied: access_denied; a confidential client without refresh_token gets none', { skip }, async () => {
      const denied = (await start()).body;
      await decide(denied.user_code as string, 'denied');
      assert.deepEqual(await poll(denied.device_code as string), {
        status: 400,
        body: { error: 'access_denied', error_description: 'the user denied the request' },
      });

      const auth = basic(tv.id, tv.secret);
      const approved = (await post(server, '/oauth2/device_authorization', { scope: 'openid' }, auth)).body;
      await decide(approved.user_code as string, 'approved');
      const { status, body } = await poll(approved.device_code as string, tv.id, auth);
      assert.equal(status, 200);
      assert.equal(body.refresh_token, undefined);
      assert.equal(typeof body.id_token, 'string');
    });

    it('expired: expired_token, approved or not; an unknown device code is invalid_grant', { skip }, async () => {
      const waiting = (await start()).body;
      const approved = (await start()).body;
      await decide(approved.user_code as string, 'approved');
      server.clock.offset += 601;
      for (const started of [waiting, approved]) {
        assert.deepEqual(await poll(started.device_code as string), {
          status: 400,
          body: { error: 'expired_token', error_description: 'the device code has expired' },
        });
      }
      // Too late to decide, too.
      const late = (await start()).body;
      server.clock.offset += 601;
      assert.equal(await decide(late.user_code as string, 'approved'), false);
      // Housekeeping removes a request ten minutes after it expired: then its code is unknown.
      assert.equal((await purgeOnce(server.store, server.config, now() - 600)).device_authorizations, 0);
      assert.ok((await purgeOnce(server.store, server.config, now())).device_authorizations! >= 2);
      assert.equal((await poll(waiting.device_code as string)).body.error, 'invalid_grant');
      assert.equal((await poll('not-a-device-code')).body.error, 'invalid_grant');
      assert.equal((await poll('')).body.error, 'invalid_request');
    });
  });
}

// An agent in a terminal that registers itself (RFC 7591) gets the device grant only where the
// operator's TESSERA_REGISTRATION_GRANT_TYPES gives it; then it needs no redirect URI.
describe('device clients that register themselves', () => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const server of servers) await server.close();
  });
  const register = async (server: TestServer, body: Record<string, unknown>) => {
    const response = await fetch(`${server.issuer}/oauth2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const agent = {
    client_name: 'Terminal agent',
    token_endpoint_auth_method: 'none',
    grant_types: [DEVICE_CODE_GRANT, 'refresh_token'],
    scope: 'openid profile',
  };

  it('not by default; with the operator allowing it, public and without redirect URIs', async () => {
    const plain = await startServer({ env: { TESSERA_REGISTRATION: 'open' } });
    servers.push(plain);
    const refused = await register(plain, agent);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error, 'invalid_client_metadata');

    const grants = `authorization_code refresh_token ${DEVICE_CODE_GRANT}`;
    const allowing = await startServer({
      env: { TESSERA_REGISTRATION: 'open', TESSERA_REGISTRATION_GRANT_TYPES: grants },
    });
    servers.push(allowing);
    const registered = await register(allowing, agent);
    assert.equal(registered.status, 201, JSON.stringify(registered.body));
    assert.deepEqual(registered.body.grant_types, [DEVICE_CODE_GRANT, 'refresh_token']);
    const clientId = registered.body.client_id as string;
    const started = await post(allowing, '/oauth2/device_authorization', { client_id: clientId, scope: 'openid' });
    assert.equal(started.status, 200);
    const onlyRefresh = await register(allowing, { ...agent, grant_types: ['refresh_token'] });
    assert.equal(
      onlyRefresh.body.error_description,
      `grant_types refresh_token needs authorization_code or ${DEVICE_CODE_GRANT}`,
    );
  });
});
