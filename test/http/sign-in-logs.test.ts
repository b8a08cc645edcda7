// Logs for alerting: every sign-in that fails or is refused leaves one line with the username as
// typed (escaped, bounded), a stable reason, the client and the request id; the audit trail's event
// of the attempt carries the same request id; the metrics an alert reads (failures by reason, locked
// accounts, the webhook backlog) move with them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import { run } from '../../src/cli/main.ts';
import { CLI, securityEvent } from '../../src/events/index.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { newUser, passwordSignIn } from '../helpers/passkeys.ts';
import { cliIo, freePort, startServer, type TestServer } from '../helpers/server.ts';

// A delay after two failures, a lock at the third.
const ENV = {
  LOG_LEVEL: 'info',
  TESSERA_SIGNIN_FREE_FAILURES: '2',
  TESSERA_SIGNIN_LOCK_AFTER: '3',
  TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true',
};

/** Where every failed password goes, whatever the reason: the sign-in page again, saying it failed. */
const SAME_PAGE = /^\/login\?interaction=[^&]+&error=login_failed$/;

interface Line {
  reqId?: string;
  event?: string;
  reason?: string;
  method?: string;
  username?: string | null;
  username_length?: number;
  client_id?: string | null;
  detail?: string;
  retry_after?: number;
  msg: string;
}

const unescapeHtml = (value: string) =>
  value
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'");

describe('a failed sign-in leaves a line to alert on, joined to its event by the request id', () => {
  let server: TestServer;
  const written: string[] = [];
  const raw = () => written.join('');
  const lines = () =>
    raw()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line);

  before(async () => {
    server = await startServer({ env: ENV, logStream: { write: (line) => void written.push(line) } });
  });
  after(() => server?.close());

  /** The sign-in page of an authorization request of the confidential client. */
  async function loginPage(browser: BrowserSim): Promise<string> {
    const c = server.clients.confidential;
    const params = new URLSearchParams({ client_id: c.id, redirect_uri: c.redirectUri, response_type: 'code' });
    const location = (await browser.request(`/oauth2/authorize?${params}&scope=openid`)).headers.get('location');
    assert.match(location ?? '', /^\/login\?/);
    return location!;
  }

  /** The `sign-in failed` line of the request that got `response`, and the events of that request. */
  async function failureOf(response: Response) {
    const id = response.headers.get('x-request-id');
    assert.ok(id, 'the answer names its request');
    let line: Line | undefined;
    // The line is written before the answer is sent; the stream may still hold it for a moment.
    for (let tries = 0; tries < 100 && !line; tries++) {
      line = lines().find((l) => l.reqId === id && l.msg === 'sign-in failed');
      if (!line) await new Promise((resolve) => setImmediate(resolve));
    }
    assert.ok(line, `no "sign-in failed" line for ${id}:\n${raw()}`);
    assert.equal(lines().filter((l) => l.reqId === id && l.msg === 'sign-in failed').length, 1, 'one line');
    const events = await server.store.listEvents({ requestId: id });
    return { id, line, events };
  }

  async function signIn(username: string, password: string) {
    const browser = new BrowserSim(server.issuer);
    return browser.login(await loginPage(browser), username, password);
  }

  it('a wrong password: reason wrong_password, the username, the client; the event has the request id', async () => {
    const response = await signIn('alice', 'not the password');
    assert.equal(response.status, 303);
    assert.match(response.headers.get('location') ?? '', SAME_PAGE);
    const { id, line, events } = await failureOf(response);
    assert.equal(line.event, 'sign_in_failed');
    assert.equal(line.reason, 'wrong_password');
    assert.equal(line.method, 'password');
    assert.equal(line.username, 'alice');
    assert.equal(line.client_id, server.clients.confidential.id);
    assert.deepEqual(
      events.map((e) => [e.type, e.userId, e.data?.reason, e.requestId]),
      [['user.sign_in_failed', server.user.id, 'wrong_password', id]],
    );
    const listed = cliIo(server);
    assert.equal(await run(['events', 'list', '--request', id, '--json'], listed.io), 0);
    assert.deepEqual(
      JSON.parse(listed.lines.join('\n')).map((e: Record<string, unknown>) => [e.type, e.request_id]),
      [['user.sign_in_failed', id]],
      'tessera events list --request finds the events of the line',
    );
  });

  it('an unknown user: the username as typed, its controls escaped and its length bounded', async () => {
    const typed = `mallory\n{"level":60}\u001b[31m\u202eevil`;
    const response = await signIn(typed, 'guess');
    assert.match(response.headers.get('location') ?? '', SAME_PAGE, 'the person is told what a wrong password gets');
    const { line, events, id } = await failureOf(response);
    assert.equal(line.reason, 'unknown_user');
    assert.equal(line.username, 'mallory\\u000a{"level":60}\\u001b[31m\\u202eevil');
    assert.ok(!raw().includes('\u001b') && !raw().includes('\u202e'), 'no control character reaches the log');
    assert.equal(
      raw()
        .split('\n')
        .filter((l) => l.includes('{\\"level\\":60}')).length,
      1,
      'one line, not two',
    );
    assert.deepEqual(
      events.map((e) => [e.type, e.userId, e.data?.reason, e.requestId]),
      [['user.sign_in_failed', null, 'unknown_user', id]],
    );

    const long = await failureOf(await signIn('x'.repeat(1000), 'guess'));
    assert.equal(long.line.username, 'x'.repeat(128));
    assert.equal(long.line.username_length, 1000);
  });

  it('a disabled account: reason disabled, even with the right password', async () => {
    const user = await newUser(server);
    const now = Math.floor(Date.now() / 1000);
    await server.store.setUserDisabled(user.id, true, now, securityEvent('user.disabled', now, { requester: CLI }));
    const response = await signIn(user.username, user.password);
    assert.match(response.headers.get('location') ?? '', SAME_PAGE, 'the person is told what a wrong password gets');
    const { line, events, id } = await failureOf(response);
    assert.equal(line.reason, 'disabled');
    assert.equal(line.username, user.username);
    assert.deepEqual(
      events.map((e) => [e.type, e.data?.reason, e.requestId]),
      [['user.sign_in_failed', 'disabled', id]],
    );
  });

  it('throttled, then locked: each refusal is a line with its reason; the lock is a metric', async () => {
    const user = await newUser(server);
    for (let failure = 1; failure <= 2; failure++) {
      assert.equal((await failureOf(await signIn(user.username, 'wrong'))).line.reason, 'wrong_password');
    }
    // The delay after the second failure: refused unchecked.
    const delayed = await signIn(user.username, user.password);
    assert.equal(delayed.status, 429);
    const throttled = await failureOf(delayed);
    assert.equal(throttled.line.reason, 'throttled');
    assert.equal(throttled.line.username, user.username);
    assert.equal(throttled.line.client_id, server.clients.confidential.id);
    assert.ok(throttled.line.retry_after! >= 1);
    assert.deepEqual(
      throttled.events.map((e) => [e.type, e.data?.locked, e.requestId]),
      [['user.sign_in_throttled', false, throttled.id]],
    );

    server.clock.offset += 2;
    try {
      const third = await failureOf(await signIn(user.username, 'wrong'));
      assert.equal(third.line.reason, 'wrong_password');
      assert.deepEqual(
        third.events.map((e) => [e.type, e.requestId]).sort(),
        [
          ['user.locked', third.id],
          ['user.sign_in_failed', third.id],
        ],
        'the failure and the lock it caused, both of the request',
      );
      const refused = await signIn(user.username, user.password);
      assert.equal(refused.status, 429);
      const locked = await failureOf(refused);
      assert.equal(locked.line.reason, 'locked');
      assert.deepEqual(
        locked.events.map((e) => [e.type, e.data?.locked, e.requestId]),
        [['user.sign_in_throttled', true, locked.id]],
      );
      const metrics = await (await fetch(`${server.issuer}/metrics`)).text();
      assert.match(metrics, /^tessera_locked_accounts 1$/m);
      assert.match(metrics, /^tessera_signin_failures_total\{outcome="locked",reason="locked"\} 1$/m);
      assert.match(metrics, /^tessera_signin_failures_total\{outcome="throttled",reason="throttled"\} 1$/m);
      assert.match(metrics, /^tessera_signin_failures_total\{outcome="wrong",reason="unknown_user"\} [1-9]/m);
      assert.match(metrics, /^tessera_signin_failures_total\{outcome="wrong",reason="disabled"\} [1-9]/m);
      const unlocked = cliIo(server);
      assert.equal(
        await run(['users', 'unlock', user.username], { ...unlocked.io, env: { ...unlocked.io.env, ...ENV } }),
        0,
      );
      const after = await (await fetch(`${server.issuer}/metrics`)).text();
      assert.match(after, /^tessera_locked_accounts 0$/m);
    } finally {
      server.clock.offset -= 2;
    }
  });

  it('a wrong authenticator code: reason second_factor_failed, the user, the client, the event', async () => {
    const user = await newUser(server);
    // Enrols an app from the account page.
    const setup = new BrowserSim(server.issuer);
    await passwordSignIn(setup, user);
    const account = await (await setup.request('/account')).text();
    const link = /<a href="(otpauth:\/\/totp\/[^"]+)"/.exec(account);
    assert.ok(link);
    const totp = OTPAuth.URI.parse(unescapeHtml(link[1]!)) as OTPAuth.TOTP;
    const codeAt = (offset: number) =>
      totp.generate({ timestamp: (Math.floor(Date.now() / 1000) + server.clock.offset + offset) * 1000 });
    const form = { csrf: BrowserSim.hidden(account, 'csrf'), enrolment: BrowserSim.hidden(account, 'enrolment') };
    assert.equal((await setup.request('/account/totp', { form: { ...form, code: codeAt(0) } })).status, 200);

    const browser = new BrowserSim(server.issuer);
    const toCode = await browser.login(await loginPage(browser), user.username, user.password);
    const location = toCode.headers.get('location') ?? '';
    assert.match(location, /^\/login\/totp\?pending=/);
    const page = await (await browser.request(location)).text();
    // A code of an hour ago: wrong now.
    const wrong = codeAt(-3600) === codeAt(0) ? codeAt(-7200) : codeAt(-3600);
    const answer = await browser.request('/login/totp', {
      form: { pending: BrowserSim.hidden(page, 'pending'), csrf: BrowserSim.hidden(page, 'csrf'), code: wrong },
    });
    assert.equal(answer.status, 400);
    const { line, events, id } = await failureOf(answer);
    assert.equal(line.reason, 'second_factor_failed');
    assert.equal(line.method, 'totp');
    assert.equal(line.detail, 'wrong_code');
    assert.equal(line.username, user.username);
    assert.equal(line.client_id, server.clients.confidential.id);
    assert.deepEqual(
      events.map((e) => [e.type, e.userId, e.data?.method, e.requestId]),
      [['user.sign_in_failed', user.id, 'totp', id]],
    );
  });

  it('a webhook that cannot be reached: its backlog and the age of the oldest delivery are metrics', async () => {
    const { io, lines: out } = cliIo(server);
    const url = `http://127.0.0.1:${await freePort()}/hook`;
    const created = await run(['webhooks', 'create', '--url', url, '--events', 'user.sign_in_failed'], {
      ...io,
      env: { ...io.env, ...ENV },
    });
    assert.equal(created, 0, out.join('\n'));
    await signIn('alice', 'wrong again');
    const metrics = await (await fetch(`${server.issuer}/metrics`)).text();
    assert.match(metrics, /^tessera_webhook_deliveries_pending [1-9]\d*$/m);
    assert.match(metrics, /^tessera_webhook_oldest_pending_seconds \d+$/m);
  });
});
