// Authenticator apps and recovery codes at the server, over HTTP: codes computed by otpauth (an
// implementation independent of the server's node:crypto one) from the secret of the account page's
// otpauth:// link. A code works once, also when sent twice at once; guesses sent at once are admitted
// before any is checked, and a right password gives no more guesses; a recovery code works once
// with one event; a removal needs a recent sign-in and ends the other sessions; an operator's reset
// lets the user in with the password alone; the secret is stored encrypted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import { createHash, randomBytes } from 'node:crypto';
import { clientsCommand } from '../../src/cli/commands/clients.ts';
import { usersCommand } from '../../src/cli/commands/users.ts';
import { securityEvent } from '../../src/events/index.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { newUser, passwordSignIn, signedIn } from '../helpers/passkeys.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';

const unescape = (value: string) =>
  value
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'");

describe('authenticator apps and recovery codes over HTTP', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.close();
  });

  /** The code of the app at the server's clock (which tests move on by whole steps). */
  const codeOf = (totp: OTPAuth.TOTP) =>
    totp.generate({ timestamp: ((server.clock.frozen ?? Date.now() / 1000) + server.clock.offset) * 1000 });
  const nextStep = () => {
    server.clock.offset += 30;
  };

  /** Signs a new user in, enrols an app from the account page's otpauth:// link; the app and codes. */
  async function enrolled() {
    const user = await newUser(server);
    const browser = new BrowserSim(server.issuer);
    assert.equal((await passwordSignIn(browser, user)).headers.get('location'), '/account');
    const page = await (await browser.request('/account')).text();
    const link = /<a href="(otpauth:\/\/totp\/[^"]+)"/.exec(page);
    assert.ok(link, 'the account page links the otpauth:// URI');
    const uri = unescape(link[1]!);
    const totp = OTPAuth.URI.parse(uri) as OTPAuth.TOTP;
    assert.deepEqual([totp.algorithm, totp.digits, totp.period], ['SHA1', 6, 30]);
    assert.match(page, /<svg[^>]*role="img"/, 'a QR code made on the server');
    assert.match(page, /autocomplete="one-time-code"/);
    const form = { csrf: BrowserSim.hidden(page, 'csrf'), enrolment: BrowserSim.hidden(page, 'enrolment') };
    const wrong = await browser.request('/account/totp', {
      form: { ...form, code: '000000' === codeOf(totp) ? '111111' : '000000' },
    });
    assert.equal(wrong.status, 400, 'a wrong code is refused, and the same key shown again');
    assert.ok((await wrong.text()).includes(totp.secret.base32.slice(0, 4)));
    const done = await browser.request('/account/totp', { form: { ...form, code: codeOf(totp) } });
    assert.equal(done.status, 200);
    const codes = [...(await done.text()).matchAll(/<li><code>([a-z2-7-]+)<\/code><\/li>/g)].map((m) => m[1]!);
    assert.equal(codes.length, 10, 'ten recovery codes, shown once');
    nextStep();
    return { user, browser, totp, codes };
  }

  /** The password, then the code page: its form. */
  async function toCodePage(browser: BrowserSim, user: { username: string; password: string }) {
    const response = await passwordSignIn(browser, user);
    assert.equal(response.status, 303);
    const location = response.headers.get('location')!;
    assert.match(location, /^\/login\/totp\?pending=/);
    const page = await (await browser.request(location)).text();
    return { location, pending: BrowserSim.hidden(page, 'pending'), csrf: BrowserSim.hidden(page, 'csrf'), page };
  }

  it('enrols from the otpauth:// link; the app is asked after the password, a code works once', async () => {
    const { user, totp } = await enrolled();
    const [secret] = await (
      await server.db()
    )
      .selectFrom('totp_credentials')
      .select('secret_enc')
      .where('user_id', '=', user.id)
      .execute();
    assert.ok(secret && !secret.secret_enc.includes(totp.secret.base32), 'stored encrypted');
    const browser = new BrowserSim(server.issuer);
    const step = await toCodePage(browser, user);
    assert.equal(await signedIn(browser), false, 'the password alone signs nobody in');
    // In the reader's language (the switch's `lang`, then its cookie), as every page.
    const german = await (await browser.request(`${step.location}&lang=de`)).text();
    assert.match(german, /<html lang="de">/);
    assert.match(german, /Code aus der Authenticator-App eingeben/);
    const code = codeOf(totp);
    const ok = await browser.request('/login/totp', { form: { pending: step.pending, csrf: step.csrf, code } });
    assert.equal(ok.headers.get('location'), '/account');
    assert.equal(await signedIn(browser), true);
    // The same code again, from another browser with the password: refused.
    const other = new BrowserSim(server.issuer);
    const again = await toCodePage(other, user);
    const replayed = await other.request('/login/totp', { form: { pending: again.pending, csrf: again.csrf, code } });
    assert.equal(replayed.status, 400);
    assert.equal(await signedIn(other), false);
    const events = await server.store.listEvents({ userId: user.id, type: 'user.sign_in_failed', limit: 5 });
    assert.deepEqual(events[0]?.data, { reason: 'replayed', method: 'totp' });
    nextStep();
  });

  it('the same right code sent twice at once signs in once', async () => {
    const { user, totp } = await enrolled();
    const [a, b] = [new BrowserSim(server.issuer), new BrowserSim(server.issuer)];
    const [pa, pb] = [await toCodePage(a, user), await toCodePage(b, user)];
    const code = codeOf(totp);
    const answers = await Promise.all([
      a.request('/login/totp', { form: { pending: pa.pending, csrf: pa.csrf, code } }),
      b.request('/login/totp', { form: { pending: pb.pending, csrf: pb.csrf, code } }),
    ]);
    assert.deepEqual(answers.map((r) => r.status).sort(), [303, 400]);
    assert.deepEqual([await signedIn(a), await signedIn(b)].sort(), [false, true]);
    nextStep();
  });

  it('guesses sent at once are admitted before any is checked; the password gives no more', async () => {
    const { user, totp } = await enrolled();
    // The clock stands still: the delay after the free failures never runs out, however slow the machine.
    server.clock.frozen = Math.floor(Date.now() / 1000);
    try {
      await burst(user, totp);
    } finally {
      delete server.clock.frozen;
    }
    nextStep();
  });

  async function burst(user: { username: string; password: string; id: string }, totp: OTPAuth.TOTP) {
    const browser = new BrowserSim(server.issuer);
    const step = await toCodePage(browser, user);
    const right = codeOf(totp);
    const wrong = (i: number) => String((Number(right) + 1 + i) % 1_000_000).padStart(6, '0');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        browser.request('/login/totp', { form: { pending: step.pending, csrf: step.csrf, code: wrong(i) } }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 400).length, server.config.throttle.freeFailures);
    assert.equal(statuses.filter((s) => s === 429).length, 20 - server.config.throttle.freeFailures);
    assert.ok(answers.find((r) => r.status === 429)!.headers.get('retry-after'));
    const failed = await server.store.listEvents({ userId: user.id, type: 'user.sign_in_failed', limit: 50 });
    assert.equal(failed.length, server.config.throttle.freeFailures, 'only the allowance was checked');
    // The right code now is refused unchecked; the right password again does not clear the count.
    const refused = await browser.request('/login/totp', {
      form: { pending: step.pending, csrf: step.csrf, code: right },
    });
    assert.equal(refused.status, 429);
    const again = await toCodePage(new BrowserSim(server.issuer), user);
    assert.ok(again.pending);
    const [state] = await server.store.getThrottles([`second-factor:${user.username}`]);
    assert.ok(state && state.failures >= server.config.throttle.freeFailures);
    // `tessera users unlock` clears it with the password's.
    const { io } = cliIo(server);
    assert.equal(await usersCommand(server.store, server.config, ['unlock', user.username], io), 0);
    assert.deepEqual(await server.store.getThrottles([`second-factor:${user.username}`]), []);
  }

  it('a recovery code signs in once instead of the app, is an event, and is said on the account page', async () => {
    const { user, codes } = await enrolled();
    const use = async (code: string) => {
      const browser = new BrowserSim(server.issuer);
      const step = await toCodePage(browser, user);
      assert.match(step.page, /href="\/login\/recovery-code\?pending=/, 'offered instead');
      const page = await (
        await browser.request(`/login/recovery-code?pending=${encodeURIComponent(step.pending)}`)
      ).text();
      const form = { pending: BrowserSim.hidden(page, 'pending'), csrf: BrowserSim.hidden(page, 'csrf'), code };
      return { browser, response: await browser.request('/login/recovery-code', { form }) };
    };
    const [code] = codes;
    const first = await use(code!.toUpperCase().replace(/-/g, ' '));
    assert.equal(first.response.headers.get('location'), '/account');
    const account = await (await first.browser.request('/account')).text();
    assert.match(account, /9 of 10 recovery codes left; 1 used/);
    assert.match(account, /A recovery code was last used to sign in/);
    const used = await server.store.listEvents({ userId: user.id, type: 'recovery_code.used', limit: 5 });
    assert.equal(used.length, 1);
    const second = await use(code!);
    assert.equal(second.response.status, 400, 'a code works once');
    assert.equal(await signedIn(second.browser), false);
  });

  it('removing the app needs a recent sign-in and ends the other sessions; an operator reset lets the password in', async () => {
    const { user, browser, totp } = await enrolled();
    // Six minutes on, the first browser's sign-in is not recent; another signs in now.
    server.clock.offset += 6 * 60;
    const other = new BrowserSim(server.issuer);
    const step = await toCodePage(other, user);
    await other.request('/login/totp', { form: { pending: step.pending, csrf: step.csrf, code: codeOf(totp) } });
    assert.equal(await signedIn(other), true);
    const page = await (await browser.request('/account')).text();
    const remove = await browser.request('/account/totp/remove', { form: { csrf: BrowserSim.hidden(page, 'csrf') } });
    assert.equal(remove.headers.get('location'), '/account/login?reauth=1', 'a sign-in older than 5 minutes');
    const fresh = await (await other.request('/account')).text();
    const removed = await other.request('/account/totp/remove', { form: { csrf: BrowserSim.hidden(fresh, 'csrf') } });
    assert.equal(removed.headers.get('location'), '/account?mfa=removed#second-factors');
    assert.equal(await signedIn(browser), false, 'the other session ended');
    assert.equal(await server.store.hasRecoveryCodes(user.id), false, 'no second factor left for the codes');

    // Enrolled again, then lost: the operator resets, the user signs in with the password alone.
    const again = await enrolled();
    const { lines, io } = cliIo(server);
    assert.equal(await usersCommand(server.store, server.config, ['mfa', 'show', again.user.username], io), 0);
    assert.match(lines.join('\n'), /authenticator app {2}added/);
    assert.match(lines.join('\n'), /recovery codes {5}10 left, 0 used/);
    assert.equal(await usersCommand(server.store, server.config, ['mfa', 'reset', again.user.username], io), 0);
    assert.match(lines.at(-1)!, /removed the authenticator app and 10 recovery code\(s\), ended 1 session\(s\)/);
    assert.equal(await signedIn(again.browser), false);
    const [reset] = await server.store.listEvents({ userId: again.user.id, type: 'mfa.reset', limit: 1 });
    assert.ok(reset);
    const back = new BrowserSim(server.issuer);
    assert.equal((await passwordSignIn(back, again.user)).headers.get('location'), '/account');
  });

  it('a client made with --require-mfa has a user without a second factor enrol one; --no-require-mfa takes it back', async () => {
    const { lines, io } = cliIo(server);
    const redirect = `${server.issuer}/cb/payroll`;
    const create = ['create', '--name', 'Payroll', '--redirect-uri', redirect, '--scope', 'openid', '--first-party'];
    assert.equal(await clientsCommand(server.store, server.config, [...create, '--require-mfa', '--json'], io), 0);
    const made = JSON.parse(lines.find((l) => l.startsWith('{'))!) as { client_id: string; require_mfa: boolean };
    assert.equal(made.require_mfa, true);
    const user = await newUser(server);
    const authorizeUrl = () => {
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const params = { client_id: made.client_id, redirect_uri: redirect, response_type: 'code', scope: 'openid' };
      const pkce = { code_challenge: challenge, code_challenge_method: 'S256', state: 's' };
      return `${server.issuer}/oauth2/authorize?${new URLSearchParams({ ...params, ...pkce })}`;
    };
    const browser = new BrowserSim(server.issuer);
    const next = await browser.authorize(authorizeUrl(), user);
    assert.equal(next.pathname, '/login/totp', 'not to the client: to the enrolment');
    assert.match(await (await browser.request(next.href)).text(), /Set up an authenticator app/);
    assert.equal(await signedIn(browser), false);

    const update = ['update', made.client_id, '--no-require-mfa'];
    assert.equal(await clientsCommand(server.store, server.config, update, io), 0);
    const back = await new BrowserSim(server.issuer).authorize(authorizeUrl(), user);
    assert.equal(`${back.origin}${back.pathname}`, redirect);
    assert.ok(back.searchParams.get('code'));
  });
});

describe('TESSERA_MFA=off and TESSERA_MFA_SCOPES', () => {
  let off: TestServer;
  let scoped: TestServer;
  before(async () => {
    off = await startServer({ env: { TESSERA_MFA: 'off' } });
    scoped = await startServer({ env: { TESSERA_MFA_SCOPES: 'apps' } });
  });
  after(async () => {
    await off?.close();
    await scoped?.close();
  });

  it('off: an app enrolled before is not asked for, and the account page offers none', async () => {
    const user = await newUser(off);
    const app = { userId: user.id, secretEnc: 'x.y.z', lastStep: 0, createdAt: 1, lastUsedAt: null };
    const enrolled = securityEvent('mfa.enrolled', 1, { userId: user.id });
    assert.equal(await off.store.enrolTotp(app, ['h'], enrolled), true);
    const browser = new BrowserSim(off.issuer);
    assert.equal((await passwordSignIn(browser, user)).headers.get('location'), '/account');
    const page = await (await browser.request('/account')).text();
    assert.doesNotMatch(page, /Authenticator app|otpauth:/);
    const refused = await browser.request('/account/totp', { form: { csrf: BrowserSim.hidden(page, 'csrf') } });
    assert.equal(refused.headers.get('location'), '/account');
  });

  it('a scope of TESSERA_MFA_SCOPES needs two factors; other requests do not', async () => {
    const user = await newUser(scoped);
    const c = scoped.clients.firstParty;
    const url = (scope: string) =>
      `${scoped.issuer}/oauth2/authorize?${new URLSearchParams({
        client_id: c.id,
        redirect_uri: c.redirectUri,
        response_type: 'code',
        scope,
        state: 's',
      })}`;
    const plain = await new BrowserSim(scoped.issuer).authorize(url('openid'), user);
    assert.ok(plain.searchParams.get('code'));
    const browser = new BrowserSim(scoped.issuer);
    const apps = await browser.authorize(url('openid apps'), user);
    assert.equal(apps.pathname, '/login/totp');
    assert.match(await (await browser.request(apps.href)).text(), /Set up an authenticator app/);
  });
});
