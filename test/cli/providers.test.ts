// `tessera providers`: what it refuses and why (exit 2 for arguments, 1 for a provider whose discovery
// document cannot be read), the callback URI it prints, the client secret stored encrypted under
// TESSERA_SECRET and never printed, updates and deletion, each recorded in the audit trail.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { openClientSecret } from '../../src/upstream/secrets.ts';
import { cliIo, freePort, startServer, type TestServer } from '../helpers/server.ts';
import { type OidcUpstream, startOidcUpstream } from '../helpers/upstreams.ts';

describe('tessera providers', () => {
  let server: TestServer;
  let upstream: OidcUpstream;
  before(async () => {
    server = await startServer();
    upstream = await startOidcUpstream({ redirectUris: [`${server.issuer}/login/upstream/corp/callback`] });
  });
  after(async () => {
    await upstream?.close();
    await server?.close();
  });

  const cli = async (
    args: string[],
    stdin = '',
    env: Record<string, string> = { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' },
  ) => {
    const { io, lines } = cliIo(server, stdin);
    io.env = { ...io.env, TESSERA_ISSUER: server.issuer, ...env };
    const code = await run(args, io);
    return { code, out: lines.join('\n') };
  };
  const oidc = (id: string, ...more: string[]) => [
    ...['providers', 'create', '--type', 'oidc', '--id', id, '--issuer', upstream.issuer],
    ...['--client-id', upstream.clientId, '--client-secret-stdin', ...more],
  ];

  it('refuses what it cannot use, saying why', async () => {
    const refusals: Array<[string[], RegExp, Record<string, string>?]> = [
      [['providers', 'create', '--issuer', upstream.issuer], /--type is required/],
      [['providers', 'create', '--type', 'saml'], /--type: oidc or github/],
      [['providers', 'create', '--type', 'oidc', '--client-id', 'x', '--client-secret-stdin'], /--issuer is required/],
      [oidc('corp').filter((a) => a !== '--client-secret-stdin'), /add --client-secret-stdin/],
      [oidc('Not An Id'), /--id: "Not An Id" must be/],
      [oidc('corp', '--scope', 'profile email'), /--scope must include openid/],
      [oidc('corp', '--login-hint-domain', 'not a domain'), /is not a domain name/],
      [oidc('corp', '--github-url', 'https://github.example'), /--github-url is for GitHub/],
      [
        [
          'providers',
          'create',
          '--type',
          'github',
          '--client-id',
          'x',
          '--client-secret-stdin',
          '--trust-upstream-mfa',
        ],
        /GitHub does not say/,
      ],
      [
        ['providers', 'create', '--type', 'github', '--client-id', 'x', '--client-secret-stdin', '--accept-id-jag'],
        /--accept-id-jag is for OpenID Connect providers/,
      ],
      // Plain http only where private addresses are allowed (development and tests).
      [oidc('corp'), /--issuer: must be https/, {}],
    ];
    for (const [args, message, env] of refusals) {
      const { code, out } = await cli(args, 'secret', env);
      assert.equal(code, 2, `${args.join(' ')}: ${out}`);
      assert.match(out, message);
    }
    assert.equal((await cli(oidc('corp'), '')).code, 2);
    assert.deepEqual(await server.store.listProviders(), []);
  });

  it('reads the discovery document first, unless told not to', async () => {
    const closed = `http://localhost:${await freePort()}`;
    const args = ['providers', 'create', '--type', 'oidc', '--id', 'down', '--issuer', closed, '--client-id', 'x'];
    const failed = await cli([...args, '--client-secret-stdin'], 'secret');
    assert.equal(failed.code, 1);
    assert.match(failed.out, /the discovery document of http:\/\/localhost:\d+ could not be read/);
    assert.equal(await server.store.getProvider('down'), undefined);
    assert.equal((await cli([...args, '--client-secret-stdin', '--no-check'], 'secret')).code, 0);
    assert.equal((await cli(['providers', 'delete', 'down'])).code, 0);
  });

  it('creates, shows, lists, updates and deletes a provider, its secret encrypted and never printed', async () => {
    const made = await cli(
      oidc('corp', '--name', 'Corp SSO', '--trust-email', '--login-hint-domain', 'Corp.Example'),
      `${upstream.clientSecret}\n`,
    );
    assert.equal(made.code, 0, made.out);
    const callback = `${server.issuer}/login/upstream/corp/callback`;
    assert.match(made.out, new RegExp(`Register this redirect URI at the provider: ${callback}`));
    assert.equal((await cli(oidc('corp'), upstream.clientSecret)).code, 2);

    const shown = JSON.parse((await cli(['providers', 'show', 'corp', '--json'])).out) as Record<string, unknown>;
    assert.deepEqual(
      { ...shown, created_at: undefined, updated_at: undefined },
      {
        id: 'corp',
        type: 'oidc',
        name: 'Corp SSO',
        issuer: upstream.issuer,
        client_id: upstream.clientId,
        scope: 'openid profile email',
        trust_email: true,
        link_only: false,
        trust_upstream_mfa: false,
        allow_private_network: false,
        login_hint_domains: ['corp.example'],
        accept_id_jag: false,
        callback_uri: callback,
        linked_accounts: 0,
        created_at: undefined,
        updated_at: undefined,
      },
    );
    const listed = await cli(['providers', 'list']);
    assert.match(listed.out, /corp +oidc +Corp SSO/);
    for (const out of [made.out, listed.out, (await cli(['providers', 'show', 'corp'])).out]) {
      assert.doesNotMatch(out, new RegExp(upstream.clientSecret));
    }

    // At rest: encrypted under TESSERA_SECRET, readable with it and no other.
    const db = await server.db();
    const row = await db
      .selectFrom('upstream_providers')
      .selectAll()
      .where('id', '=', 'corp')
      .executeTakeFirstOrThrow();
    assert.ok(!row.client_secret_enc.includes(upstream.clientSecret));
    assert.equal(openClientSecret(row.client_secret_enc, server.secret), upstream.clientSecret);
    assert.throws(() => openClientSecret(row.client_secret_enc, 'another secret of at least thirty-two characters'));

    const updated = await cli(
      [
        'providers',
        'update',
        'corp',
        '--name',
        'Corp',
        '--no-trust-email',
        '--link-only',
        '--no-login-hint-domains',
      ].concat(['--client-secret-stdin']),
      'the new secret\n',
    );
    assert.equal(updated.code, 0, updated.out);
    const after = (await server.store.getProvider('corp'))!;
    assert.deepEqual([after.name, after.trustEmail, after.linkOnly, after.loginHintDomains], ['Corp', false, true, []]);
    assert.equal(openClientSecret(after.clientSecretEnc, server.secret), 'the new secret');
    assert.equal((await cli(['providers', 'update', 'corp', '--trust-email', '--no-trust-email'])).code, 2);
    assert.equal((await cli(['providers', 'update', 'nope', '--name', 'x'])).code, 1);

    assert.equal((await cli(['providers', 'delete', 'corp'])).code, 0);
    assert.equal((await cli(['providers', 'delete', 'corp'])).code, 1);
    assert.equal((await cli(['providers', 'show', 'corp'])).code, 1);
    const types = (await server.store.listEvents({ limit: 30 })).filter(
      (e) => e.type.startsWith('provider.') && e.data?.provider === 'corp',
    );
    assert.deepEqual(types.map((e) => [e.type, e.data?.provider, e.userAgent]).reverse(), [
      ['provider.created', 'corp', 'tessera CLI'],
      ['provider.updated', 'corp', 'tessera CLI'],
      ['provider.deleted', 'corp', 'tessera CLI'],
    ]);
  });

  it('keeps people’s links from following the provider to another issuer unless told', async () => {
    assert.equal((await cli(oidc('moving'), upstream.clientSecret)).code, 0);
    const now = Math.floor(Date.now() / 1000);
    const link = {
      providerId: 'moving',
      subject: 'sub-1',
      userId: server.user.id,
      email: null,
      createdAt: now,
      lastUsedAt: null,
    };
    assert.equal(await server.store.createLink(link), true);
    const move = ['providers', 'update', 'moving', '--issuer', 'http://localhost:1/', '--no-check'];
    const refused = await cli(move);
    assert.equal(refused.code, 2);
    assert.match(refused.out, /1 people are linked to moving by their subject there.*--keep-links/);
    assert.equal((await server.store.getProvider('moving'))?.issuer, upstream.issuer);
    assert.equal((await cli([...move, '--keep-links'])).code, 0);
    assert.equal((await server.store.getProvider('moving'))?.issuer, 'http://localhost:1/');
    assert.equal((await server.store.getLink('moving', 'sub-1'))?.userId, server.user.id);
  });

  it('moves a provider’s client secret to a new TESSERA_SECRET with tessera secret reencrypt', async () => {
    assert.equal((await cli(oidc('rekeyed'), upstream.clientSecret)).code, 0);
    const next = 'a new secret of at least thirty-two characters for the rotation';
    const rotated = {
      TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true',
      TESSERA_SECRET: next,
      TESSERA_SECRET_PREVIOUS: server.secret,
    };
    const moved = await cli(['secret', 'reencrypt'], '', rotated);
    assert.equal(moved.code, 0, moved.out);
    assert.match(moved.out, /upstream_providers\.client_secret_enc: [1-9]\d* re-encrypted/);
    const sealed = (await server.store.getProvider('rekeyed'))!.clientSecretEnc;
    assert.equal(openClientSecret(sealed, next), upstream.clientSecret);
    assert.throws(() => openClientSecret(sealed, server.secret));
    // Back under the server's secret, for the tests that follow.
    const back = { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true', TESSERA_SECRET_PREVIOUS: next };
    const returned = await cli(['secret', 'reencrypt'], '', back);
    assert.equal(returned.code, 0, returned.out);
    assert.equal(
      openClientSecret((await server.store.getProvider('rekeyed'))!.clientSecretEnc, server.secret),
      upstream.clientSecret,
    );
  });

  it('makes a GitHub provider with GitHub’s addresses unless told others', async () => {
    const made = await cli(
      ['providers', 'create', '--type', 'github', '--client-id', 'Iv1.abc', '--client-secret-stdin', '--json'],
      's3cret',
    );
    assert.equal(made.code, 0, made.out);
    const shown = JSON.parse(made.out) as Record<string, unknown>;
    assert.equal(shown.id, 'github');
    assert.equal(shown.name, 'GitHub');
    assert.equal(shown.github_url, 'https://github.com');
    assert.equal(shown.github_api_url, 'https://api.github.com');
    assert.equal(shown.scope, 'read:user user:email');
    const enterprise = await cli(
      [
        'providers',
        'create',
        '--type',
        'github',
        '--name',
        'GitHub Enterprise',
        '--client-id',
        'x',
        '--client-secret-stdin',
      ].concat(['--github-url', 'https://ghe.example.com/', '--github-api-url', 'https://ghe.example.com/api/v3']),
      's3cret',
    );
    assert.equal(enterprise.code, 0, enterprise.out);
    const ghe = (await server.store.getProvider('github-enterprise'))!;
    assert.deepEqual([ghe.githubUrl, ghe.githubApiUrl], ['https://ghe.example.com', 'https://ghe.example.com/api/v3']);
  });
});
