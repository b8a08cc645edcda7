// GitHub as the upstream provider, against a stand-in on loopback that speaks GitHub's documented
// endpoints (the OAuth web flow with PKCE, the token answered as JSON only to Accept:
// application/json, GET /user and GET /user/emails with a bearer token and a User-Agent): the person
// is their numeric GitHub id, whatever their login becomes, with their primary email as GitHub
// verified it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { startServer, type TestServer } from '../helpers/server.ts';
import { exchange } from '../helpers/tokens.ts';
import { Browser } from '../helpers/upstream-browser.ts';
import { type GithubStandIn, startGithubStandIn } from '../helpers/github-stand-in.ts';
import { tessera } from '../helpers/upstreams.ts';

describe('GitHub as the upstream provider', () => {
  let server: TestServer;
  let github: GithubStandIn;

  before(async () => {
    server = await startServer({ env: { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    github = await startGithubStandIn(`${server.issuer}/login/upstream/github/callback`);
    const made = await tessera(
      server,
      ['providers', 'create', '--type', 'github', '--client-id', github.clientId, '--client-secret-stdin'].concat([
        '--github-url',
        github.url,
        '--github-api-url',
        github.apiUrl,
      ]),
      `${github.clientSecret}\n`,
    );
    assert.equal(made.code, 0, made.out);
    assert.match(made.out, /created provider github \(GitHub\), its button says "GitHub"/);
    assert.match(made.out, new RegExp(`${server.issuer}/login/upstream/github/callback`));
  });
  after(async () => {
    await github?.close();
    await server?.close();
  });

  /** Through the sign-in page's GitHub button to the client's code, or the page it stopped at. */
  async function signIn() {
    const c = server.clients.confidential;
    const browser = new Browser();
    const query = new URLSearchParams({
      ...{ client_id: c.id, redirect_uri: c.redirectUri, response_type: 'code' },
      ...{ scope: 'openid profile email', state: 'st', nonce: 'nn' },
    });
    const { stoppedAt, page } = await browser.drive(
      `${server.issuer}/oauth2/authorize?${query}`,
      (p) => {
        if (p.status !== 200) return undefined;
        if (p.url.pathname === '/login') return { form: p.forms.find((f) => f.action === '/login/upstream/github')! };
        if (p.url.pathname === '/consent') return { form: p.forms[0]!, fields: { decision: 'allow' } };
        return undefined;
      },
      c.redirectUri,
    );
    if (!stoppedAt) return { page };
    const code = stoppedAt.searchParams.get('code')!;
    const tokens = (await (await exchange(server, { code, verifier: null, client: c })).json()) as { id_token: string };
    return { claims: decodeJwt(tokens.id_token) };
  }

  it('makes a user from the GitHub account, and signs the same user in after a rename', async () => {
    github.next = {
      id: 583231,
      login: 'octocat',
      name: 'The Octocat',
      emails: [
        { email: 'octo@old.example', primary: false, verified: true },
        { email: 'octocat@github.example', primary: true, verified: true },
      ],
    };
    const { claims } = await signIn();
    assert.ok(claims);
    const made = await server.store.getUserByUsername('octocat');
    assert.equal(claims.sub, made?.id);
    assert.equal(claims.email, 'octocat@github.example');
    assert.equal(claims.email_verified, true);
    assert.equal(claims.name, 'The Octocat');
    assert.deepEqual(claims.amr, ['fed']);
    assert.equal((await server.store.getLink('github', '583231'))?.userId, made?.id);
    // The code was exchanged as GitHub documents it: JSON asked for, the PKCE verifier sent.
    const asked = github.tokenRequests.at(-1)!;
    assert.equal(asked.accept, 'application/json');
    assert.ok(asked.form.get('code_verifier'));
    assert.equal(asked.form.get('redirect_uri'), `${server.issuer}/login/upstream/github/callback`);

    github.next = { ...github.next, login: 'octocat-renamed' };
    assert.equal((await signIn()).claims?.sub, made?.id);
  });

  it('keeps an unverified primary email unverified, on a user of its own', async () => {
    github.next = {
      id: 99,
      login: 'newbie',
      name: null,
      emails: [{ email: 'octocat@github.example', primary: true, verified: false }],
    };
    const { claims } = await signIn();
    assert.equal(claims?.email_verified, false);
    assert.notEqual(claims?.sub, (await server.store.getUserByUsername('octocat'))?.id);
  });

  it('shows GitHub’s refusals with the way back to local sign-in', async () => {
    github.deny = true;
    const denied = await signIn();
    github.deny = false;
    assert.equal(denied.page?.status, 400);
    assert.match(denied.page.body, /Signing in with GitHub was cancelled/);
    assert.match(denied.page.body, /local=1">Sign in another way</);

    // A client secret GitHub does not accept: its error answer (200, with `error`) is an error.
    const changed = await tessera(server, ['providers', 'update', 'github', '--client-secret-stdin'], 'wrong\n');
    assert.equal(changed.code, 0, changed.out);
    const refused = await signIn();
    assert.equal(refused.page?.status, 400);
    assert.match(refused.page.body, /GitHub refused the sign-in/);
    assert.match(refused.page.body, /bad_verification_code/);
    const [failed] = await server.store.listEvents({ type: 'user.upstream_sign_in_failed', limit: 1 });
    assert.deepEqual(failed?.data, { provider: 'github', reason: 'provider_error', error: 'bad_verification_code' });
    await tessera(server, ['providers', 'update', 'github', '--client-secret-stdin'], github.clientSecret);
    assert.ok((await signIn()).claims);
  });
});
