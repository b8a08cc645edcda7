// Passwords worth having (NIST SP 800-63B §3.1.1.2): length in code points after NFKC, Unicode, no
// composition rules, none of 437,651 common or leaked passwords; refused by the CLI with the rule;
// changed on the account page with the current password, ending the user's other sessions.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { isCommonPassword, passwordProblem } from '../../src/authn/password/rules.ts';
import { hashPassword, verifyPassword } from '../../src/authn/password/hash.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';

const rules = { minLength: 8, username: 'alice' };

describe('password rules', () => {
  it('length in characters after NFKC, at most 256; any characters, no composition rules', () => {
    assert.match(passwordProblem('short', rules)!, /at least 8 characters/);
    // Seven astral characters are 14 UTF-16 units but 7 characters: too short.
    assert.match(passwordProblem('🐢🐢🐢🐢🐢🐢🐢', rules)!, /at least 8/);
    assert.equal(passwordProblem('🐢🐢🐢🐢🐢🐢🐢🐙', rules), undefined);
    assert.equal(passwordProblem('ümlaut und ß sind gut', rules), undefined);
    assert.equal(passwordProblem('all lowercase words here', rules), undefined);
    assert.match(passwordProblem('x'.repeat(257), rules)!, /at most 256/);
    assert.match(passwordProblem('ALICE', { ...rules, minLength: 5 })!, /must not be the username/);
  });

  it('refuses the common and leaked ones, in any case; the list has over 100,000', () => {
    for (const common of ['password', 'Password1', 'iloveyou', 'qwertyuiop', 'PASSWORD123']) {
      assert.match(passwordProblem(common, rules)!, /list of common or leaked passwords/, common);
    }
    assert.equal(isCommonPassword('correct horse battery staple on a tuesday'), false);
  });

  it('NFKC: a password typed with another form of the same characters still matches', async () => {
    const hash = await hashPassword('ﬁne café'); // the ﬁ ligature, and é as one code point
    assert.ok(await verifyPassword('fine cafe\u0301', hash));
  });
});

describe('passwords set through the CLI and the account page', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  const cli = (args: string[], stdin: string) => {
    const { lines, io } = cliIo(server, stdin);
    return run(args, io).then((code) => ({ code, output: lines.join('\n') }));
  };

  it('users create and set-password refuse a weak password with the rule, never echoing it', async () => {
    const weak = await cli(
      ['users', 'create', '--username', 'dora', '--email', 'd@example.com', '--password-stdin'],
      'letmein1\n',
    );
    assert.equal(weak.code, 2);
    assert.match(weak.output, /the password is on a list of common or leaked passwords/);
    assert.doesNotMatch(weak.output, /letmein1/);
    assert.equal(
      (
        await cli(
          ['users', 'create', '--username', 'dora', '--email', 'd@example.com', '--password-stdin'],
          'a river of quiet stones\n',
        )
      ).code,
      0,
    );
    const short = await cli(['users', 'set-password', 'dora', '--password-stdin'], 'tiny\n');
    assert.equal(short.code, 2);
    assert.match(short.output, /at least 8 characters/);
  });

  it('the account page: current password required, rules applied, other sessions ended, this one kept', async () => {
    const signedIn = async () => {
      const browser = new BrowserSim(server.issuer);
      const page = await (await browser.request('/account/login')).text();
      const login = await browser.request('/account/login', {
        form: { csrf: BrowserSim.hidden(page, 'csrf'), username: 'alice', password: server.user.password },
      });
      assert.equal(login.status, 303);
      return browser;
    };
    const here = await signedIn();
    const elsewhere = await signedIn();
    const page = await (await here.request('/account')).text();
    assert.match(page, /Recent sign-ins/);
    assert.match(page, /from 127\.0\.0\.1/);
    const change = (current: string, next: string, csrf = BrowserSim.hidden(page, 'csrf')) =>
      here.request('/account/password', { form: { csrf, current, new: next } });

    assert.equal((await change(server.user.password, 'a new passphrase', 'forged')).status, 403);
    const wrong = await change('not my password', 'a new passphrase');
    assert.equal(wrong.status, 400);
    assert.match(await wrong.text(), /The current password is wrong\./);
    const weak = await change(server.user.password, 'password1');
    assert.equal(weak.status, 400);
    assert.match(await weak.text(), /The password is on a list of common or leaked passwords/);

    const done = await change(server.user.password, 'a new passphrase');
    assert.equal(done.status, 303);
    assert.match(await (await here.request(done.headers.get('location')!)).text(), /Your password has changed/);
    assert.equal((await elsewhere.request('/account')).status, 302, 'the other session ended');
    assert.equal((await here.request('/account')).status, 200, 'this one goes on');
    const user = (await server.store.getUserById(server.user.id))!;
    assert.ok(await verifyPassword('a new passphrase', user.passwordHash!));
    assert.equal((await server.store.listEvents({ type: 'user.password_changed', limit: 1 }))[0]?.userId, user.id);
    server.user.password = 'a new passphrase';
  });
});
