// The admin API on the public listener (TESSERA_ADMIN_API=public): who may call it, users through
// it, problem details, ETags and If-Match, the OpenAPI document, and every answer checked against
// that document (test/helpers/admin-api.ts). Each write is an event naming its actor.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { adminClient, caller, cli, type Contract, contractOf } from '../helpers/admin-api.ts';
import { PASSWORD, startServer, type TestServer } from '../helpers/server.ts';

describe('admin API', () => {
  let server: TestServer;
  let contract: Contract;
  let api: ReturnType<typeof caller>;
  let admin: Awaited<ReturnType<typeof adminClient>>;

  before(async () => {
    server = await startServer({ env: { TESSERA_ADMIN_API: 'public' } });
    contract = await contractOf(server.issuer);
    admin = await adminClient(server);
    assert.equal(admin.status, 200);
    api = caller(server.issuer, contract, admin.token);
  });
  after(() => server?.close());

  const events = async (type: string) => server.store.listEvents({ type: type as never, limit: 100 });

  it('no token: 401 with WWW-Authenticate: Bearer, as problem details', async () => {
    const answer = await api('GET', '/users', { token: null });
    assert.equal(answer.status, 401);
    assert.match(answer.headers.get('www-authenticate')!, /^Bearer realm=/);
    assert.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal(answer.body.status, 401);
    assert.equal(answer.body.type, 'urn:tessera:admin-api:problem:unauthorized');
    assert.equal(answer.body.title, 'Unauthorized');
    const forged = await api('GET', '/users', { token: 'not.a.token' });
    assert.equal(forged.status, 401);
    assert.match(forged.headers.get('www-authenticate')!, /error="invalid_token"/);
  });

  it('a token without the admin scope: 403 insufficient_scope; a client not marked admin cannot get the scope', async () => {
    const plain = JSON.parse(
      await cli(server, [
        'clients',
        'create',
        '--name',
        'plain',
        '--grant-types',
        'client_credentials',
        '--scope',
        'openid',
        '--json',
      ]),
    ) as { client_id: string; client_secret: string };
    const { tokenRequest, basic } = await import('../helpers/tokens.ts');
    const response = await tokenRequest(
      server,
      { grant_type: 'client_credentials' },
      basic(plain.client_id, plain.client_secret),
    );
    const token = ((await response.json()) as { access_token: string }).access_token;
    const answer = await api('GET', '/users', { token });
    assert.equal(answer.status, 403);
    assert.equal(answer.body.type, 'urn:tessera:admin-api:problem:insufficient-scope');
    assert.match(answer.headers.get('www-authenticate')!, /error="insufficient_scope"/);
    const unmarked = await adminClient(server, 'unmarked', []);
    assert.equal(unmarked.status, 400);
    assert.equal(unmarked.token, undefined);
  });

  it('users: create (201, no password shown), read with an ETag, search, page', async () => {
    const created = await api('POST', '/users', {
      body: { username: 'carol', email: 'carol@example.com', name: 'Carol', password: PASSWORD, roles: ['editor'] },
    });
    assert.equal(created.status, 201);
    assert.ok(created.body.id);
    assert.equal(created.body.has_password, true);
    assert.equal(JSON.stringify(created.body).includes(PASSWORD), false);
    assert.equal(created.body.locked, false);
    assert.equal(created.body.disabled, false);
    assert.deepEqual(created.body.roles, ['editor']);
    assert.equal(created.headers.get('location'), `/admin/api/v1/users/${created.body.id}`);

    const read = await api('GET', `/users/${created.body.id}`);
    assert.equal(read.status, 200);
    assert.ok(read.headers.get('etag'));
    assert.equal(read.headers.get('etag'), created.headers.get('etag'));

    await api('POST', '/users', { body: { username: 'dave', email: 'dave@example.com' } });
    const found = await api('GET', '/users?q=CAROL');
    assert.deepEqual(
      found.body.items.map((u: { username: string }) => u.username),
      ['carol'],
    );
    const first = await api('GET', '/users?limit=2');
    assert.equal(first.body.items.length, 2);
    assert.ok(first.body.next_cursor);
    const second = await api('GET', `/users?limit=2&cursor=${first.body.next_cursor}`);
    const names = [...first.body.items, ...second.body.items].map((u: { username: string }) => u.username);
    assert.deepEqual(names, ['alice', 'carol', 'dave']);
    assert.equal(second.body.next_cursor, null);

    const event = (await events('user.created')).find((e) => e.userId === created.body.id);
    assert.equal(event!.actor, `client:${admin.clientId}`);
    assert.equal(event!.userId, created.body.id);
    assert.ok(event!.requestId);
  });

  it('PATCH is a JSON merge patch; a stale If-Match gets 412; events name the actor', async () => {
    const { body: user, headers } = await api('GET', `/users/${server.user.id}`);
    const etag = headers.get('etag')!;
    const patched = await api('PATCH', `/users/${user.id}`, {
      type: 'application/merge-patch+json',
      headers: { 'if-match': etag },
      body: { name: null, given_name: 'Ally', roles: ['viewer'] },
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.name, null);
    assert.equal(patched.body.given_name, 'Ally');
    assert.equal(patched.body.family_name, 'Liddell');
    assert.deepEqual(patched.body.roles, ['viewer']);
    assert.notEqual(patched.headers.get('etag'), etag);

    const stale = await api('PATCH', `/users/${user.id}`, { headers: { 'if-match': etag }, body: { name: 'Alice' } });
    assert.equal(stale.status, 412);
    assert.equal(stale.body.type, 'urn:tessera:admin-api:problem:precondition-failed');
    assert.equal((await api('GET', `/users/${user.id}`)).body.name, null, 'nothing changed');

    const [updated] = await events('user.updated');
    assert.equal(updated!.actor, `client:${admin.clientId}`);
    const [roles] = await events('user.roles_changed');
    assert.equal(roles!.actor, `client:${admin.clientId}`);
    assert.equal(roles!.userId, user.id);
  });

  it('support: a locked user unlocked, signed out everywhere with grants revoked, second factors reset, disabled, deleted', async () => {
    const created = await api('POST', '/users', {
      body: { username: 'frank', email: 'frank@example.com', password: PASSWORD },
    });
    const id = created.body.id as string;
    for (let i = 0; i < server.config.throttle.lockAfter; i++)
      await server.store.recordFailures({
        keys: [{ key: 'account:frank', subject: 'frank' }],
        now: Math.floor(Date.now() / 1000),
        window: server.config.throttle.window,
      });
    assert.equal((await api('GET', `/users/${id}`)).body.locked, true);
    const unlocked = await api('POST', `/users/${id}/unlock`);
    assert.equal(unlocked.status, 200);
    assert.equal(unlocked.body.locked, false);

    // Alice signs in at a client: a session and a grant, both ended by the sign-out.
    const { getCode, exchange } = await import('../helpers/tokens.ts');
    await exchange(server, await getCode(server, server.clients.confidential));
    const grants = await api('GET', `/users/${server.user.id}/grants`);
    assert.equal(grants.status, 200);
    assert.ok(grants.body.items.some((g: { client_id: string }) => g.client_id === server.clients.confidential.id));
    const signedOut = await api('POST', `/users/${server.user.id}/sign-out`);
    assert.equal(signedOut.status, 200);
    assert.ok(signedOut.body.sessions >= 1);
    assert.ok(signedOut.body.grants >= 1);
    assert.deepEqual((await api('GET', `/users/${server.user.id}/grants`)).body.items, []);

    const factors = await api('GET', `/users/${id}/factors`);
    assert.deepEqual(factors.body.methods, ['password']);
    const reset = await api('POST', `/users/${id}/reset-second-factors`);
    assert.equal(reset.status, 200);
    assert.equal(reset.body.totp, false);

    const disabled = await api('PATCH', `/users/${id}`, { body: { disabled: true } });
    assert.equal(disabled.body.disabled, true);
    const etag = (await api('GET', `/users/${id}`)).headers.get('etag')!;
    const stale = await api('DELETE', `/users/${id}`, { headers: { 'if-match': '"stale"' } });
    assert.equal(stale.status, 412);
    const deleted = await api('DELETE', `/users/${id}`, { headers: { 'if-match': etag } });
    assert.equal(deleted.status, 204);
    assert.equal((await api('GET', `/users/${id}`)).status, 404);

    const actor = `client:${admin.clientId}`;
    for (const type of [
      'user.unlocked',
      'user.signed_out',
      'token.revoked',
      'mfa.reset',
      'user.disabled',
      'user.deleted',
    ]) {
      const recorded = await events(type);
      assert.ok(
        recorded.some((e) => e.actor === actor),
        `${type} with the actor ${actor}`,
      );
    }
  });

  it('bad input is 400, unknown ids 404, a taken username 409: problem details, never 500', async () => {
    const cases: Array<[string, string, unknown, number]> = [
      ['POST', '/users', { username: 'x' }, 400],
      ['POST', '/users', { username: 'bad name', email: 'e@example.com' }, 400],
      ['POST', '/users', { username: 'erin', email: 'not-an-address' }, 400],
      ['POST', '/users', { username: 'erin', email: 'e@example.com', password: 'short' }, 400],
      ['POST', '/users', { username: 'alice', email: 'a2@example.com' }, 409],
      ['POST', '/users', { username: 'erin', email: 'e@example.com', surprise: 1 }, 400],
      ['PATCH', `/users/${server.user.id}`, {}, 400],
      ['PATCH', `/users/${server.user.id}`, { roles: ['Not A Role'] }, 400],
      ['PATCH', `/users/${server.user.id}`, { emial: 'x@example.com' }, 400],
      ['GET', '/users/nobody', undefined, 404],
      ['GET', '/users/nobody/grants', undefined, 404],
      ['PATCH', '/users/nobody', { name: 'x' }, 404],
      ['GET', '/users?limit=0', undefined, 400],
      ['GET', '/users?cursor=zzz', undefined, 400],
    ];
    for (const [method, path, body, status] of cases) {
      const answer = await api(method, path, body === undefined ? {} : { body });
      assert.equal(answer.status, status, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8');
      assert.equal(answer.body.status, status);
      assert.ok(answer.body.detail);
    }
    const malformed = await api('POST', '/users', { body: '{"username":' });
    assert.equal(malformed.status, 400);
    const wrongType = await api('POST', '/users', { body: 'username=x', type: 'text/plain' });
    assert.equal(wrongType.status, 415);
  });

  it('events: filtered by type, user and client, paged, each naming its actor', async () => {
    const all = await api('GET', '/events?limit=3');
    assert.equal(all.status, 200);
    assert.equal(all.body.items.length, 3);
    assert.ok(all.body.next_cursor);
    const next = await api('GET', `/events?limit=3&cursor=${all.body.next_cursor}`);
    const ids = [...all.body.items, ...next.body.items].map((e: { id: string }) => e.id);
    assert.equal(new Set(ids).size, ids.length, 'no event twice across pages');
    const created = await api('GET', '/events?type=user.created&user=carol');
    assert.equal(created.body.items.length, 1);
    assert.equal(created.body.items[0].actor, `client:${admin.clientId}`);
    const byClient = await api('GET', `/events?client=${server.clients.confidential.id}&since=1d`);
    assert.ok(byClient.body.items.every((e: { client_id: string }) => e.client_id === server.clients.confidential.id));
    assert.equal((await api('GET', '/events?type=user.nothing')).status, 400);
    assert.equal((await api('GET', '/events?since=yesterday')).status, 400);
    assert.equal((await api('GET', '/events?cursor=nonsense')).status, 400);
    assert.equal((await api('GET', '/events?user=nobody')).status, 404);
  });

  it('keys: public parts only; a staged rotation and one at once, each an event', async () => {
    const before = await api('GET', '/keys');
    assert.equal(before.status, 200);
    for (const key of before.body.items) {
      assert.ok(!JSON.stringify(key).match(/"(d|p|q|dp|dq|qi)":/), 'no private key part');
    }
    const staged = await api('POST', '/keys/rotate', { body: { alg: 'ES256' } });
    assert.equal(staged.status, 200);
    assert.equal(staged.body.alg, 'ES256');
    const after = await api('GET', '/keys');
    const next = after.body.items.find((k: { kid: string }) => k.kid === staged.body.kid);
    assert.equal(next.state, 'next');
    assert.equal(next.public_jwk.kid, staged.body.kid);
    const now = await api('POST', '/keys/rotate', { body: { alg: 'ES256', now: true } });
    assert.equal(now.body.kid, staged.body.kid);
    const active = (await api('GET', '/keys')).body.items.find((k: { kid: string }) => k.kid === staged.body.kid);
    assert.equal(active.state, 'active');
    assert.equal((await api('POST', '/keys/rotate', { body: { alg: 'HS256' } })).status, 400);
    const rotated = await events('key.rotated');
    assert.ok(rotated.length >= 2 && rotated.every((e) => e.actor === `client:${admin.clientId}`));
  });

  it("a user's token: refused without the admin role; with it, the API answers and events name the user", async () => {
    const made = JSON.parse(
      await cli(server, [
        'clients',
        'create',
        '--name',
        'console',
        '--redirect-uri',
        `${server.issuer}/cb/console`,
        '--scope',
        'openid admin',
        '--admin',
        '--first-party',
        '--json',
      ]),
    ) as { client_id: string; client_secret: string };
    const { getCode, exchange } = await import('../helpers/tokens.ts');
    const client = {
      id: made.client_id,
      secret: made.client_secret,
      redirectUri: `${server.issuer}/cb/console`,
      postLogoutRedirectUri: `${server.issuer}/cb/console/logged-out`,
    };
    await assert.rejects(getCode(server, client, { scope: 'openid admin' }), /access_denied/);
    await cli(server, ['users', 'update', 'alice', '--admin']);
    const tokens = (await (
      await exchange(server, await getCode(server, client, { scope: 'openid admin' }))
    ).json()) as { access_token: string };
    const asAlice = caller(server.issuer, contract, tokens.access_token);
    const made2 = await asAlice('POST', '/users', { body: { username: 'gina', email: 'gina@example.com' } });
    assert.equal(made2.status, 201);
    const event = (await events('user.created')).find((e) => e.userId === made2.body.id);
    assert.equal(event!.actor, `user:${server.user.id}`);
    // The role taken away, the token stops at once.
    await cli(server, ['users', 'update', 'alice', '--no-admin']);
    const after = await asAlice('GET', '/users');
    assert.equal(after.status, 403);
    assert.match(after.body.detail, /no longer an administrator/);
  });

  it('mails: a person invited by address, the invitation sent again (refused once accepted), a reset mail', async () => {
    const invited = await api('POST', '/invitations', { body: { email: 'jo@example.com', name: 'Jo' } });
    assert.equal(invited.status, 201, JSON.stringify(invited.body));
    assert.equal(invited.body.username, 'jo@example.com');
    assert.equal(invited.body.has_password, false);
    assert.equal(invited.headers.get('location'), `/admin/api/v1/users/${invited.body.id}`);
    assert.equal((await api('POST', '/invitations', { body: { email: 'jo@example.com' } })).status, 409);
    assert.equal((await api('POST', '/invitations', { body: { email: 'not-an-address' } })).status, 400);
    assert.equal((await api('POST', `/users/${invited.body.id}/invitation`)).status, 204);
    assert.equal((await api('POST', `/users/${server.user.id}/invitation`)).status, 409);
    const reset = await api('POST', `/users/${server.user.id}/password-reset`);
    assert.equal(reset.status, 204);
    const [requested] = await events('user.password_reset_requested');
    assert.equal(requested!.actor, `client:${admin.clientId}`);
    assert.deepEqual(requested!.data, { sent: true, by: 'operator' });
    assert.equal((await api('POST', '/users/nobody/password-reset')).status, 404);
    const sent = (await events('user.invited')).filter((e) => e.userId === invited.body.id);
    assert.equal(sent.length, 2);
    assert.ok(sent.every((e) => e.actor === `client:${admin.clientId}`));
  });

  it('every route of the document was called and its answers checked', () => {
    const documented = Object.entries(contract.document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const clientRoutes = documented.filter((route) => /\/(clients|resources|webhooks|providers)/.test(route));
    const missing = documented.filter((route) => !contract.checked.has(route) && !clientRoutes.includes(route));
    assert.deepEqual(missing, [], 'clients, resources, webhooks and providers are called in admin-api-clients.test.ts');
  });

  it('the OpenAPI document is 3.1, valid, and generated from the routes', async () => {
    assert.equal(contract.document.openapi, '3.1.0');
    assert.ok(contract.document.paths['/admin/api/v1/users/{id}']?.patch);
    const token = decodeJwt(admin.token!);
    assert.equal(token.scope, 'admin');
  });
});
