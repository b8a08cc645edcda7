// A user's passkeys on the account page, over HTTP with a software authenticator: added (discoverable,
// none of theirs twice, named), renamed and removed; adding and removing need a sign-in of the last
// 5 minutes, removing ends the user's other sessions and never the last way in; each change an
// event; the operator sees them with `tessera users show`, and `users delete` takes them along.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { SoftAuthenticator } from '../helpers/authenticator.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { addPasskey, newUser, pageOptions, passkeySignIn, passwordSignIn, signedIn } from '../helpers/passkeys.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';

describe('passkeys on the account page', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ host: 'localhost' });
  });
  after(() => server.close());

  const authenticator = () => new SoftAuthenticator({ origin: server.issuer });
  const today = () => new Date().toISOString().slice(0, 10);

  async function events(userId: string, type: Parameters<TestServer['store']['listEvents']>[0]['type']) {
    return (await server.store.listEvents({ userId, type, limit: 20 })).map((e) => e.data);
  }

  /** The account page's form token. */
  async function csrf(browser: BrowserSim) {
    return BrowserSim.hidden(await (await browser.request('/account')).text(), 'csrf');
  }

  it('adds a discoverable passkey, named as typed or "Passkey" and the day, never the same one twice', async () => {
    const user = await newUser(server);
    const browser = new BrowserSim(server.issuer);
    await passwordSignIn(browser, user);
    const page = await (await browser.request('/account')).text();
    const options = pageOptions(page, 'register');
    assert.equal(options.rp.id, 'localhost');
    assert.equal(options.user.name, user.username);
    assert.equal(Buffer.from(options.user.id, 'base64url').toString(), user.id);
    assert.deepEqual(options.authenticatorSelection, {
      residentKey: 'required',
      requireResidentKey: true,
      userVerification: 'preferred',
    });
    assert.deepEqual(options.excludeCredentials, []);
    assert.match(page, /<label for="passkey-name">Name of the new passkey \(optional\)<\/label>/);

    const device = authenticator();
    assert.equal((await addPasskey(browser, device)).headers.get('location'), '/account?passkey=added#passkeys');
    const laptop = await addPasskey(browser, device, { name: '  Work\tlaptop \u0007' });
    assert.equal(laptop.headers.get('location'), '/account?passkey=added#passkeys');
    const listed = await server.store.listPasskeys(user.id);
    assert.deepEqual(
      listed.map((p) => p.name),
      [`Passkey ${today()}`, 'Work laptop'],
    );
    const shown = await (await browser.request('/account?passkey=added')).text();
    assert.match(shown, /role="status">Your passkey has been added\./);
    assert.match(shown, new RegExp(`<h3 id="passkey-${listed[1]!.id}">Work laptop</h3>`));
    const shownDay = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date());
    assert.match(shown, new RegExp(`Added ${shownDay}, not used yet; kept on one device or security key\\.`));
    // The next registration leaves out the user's passkeys (WebAuthn excludeCredentials).
    const excluded = pageOptions(shown, 'register').excludeCredentials.map((c: { id: string }) => c.id);
    assert.deepEqual(excluded, [listed[0]!.credentialId, listed[1]!.credentialId]);
    assert.deepEqual(
      (await events(user.id, 'passkey.added')).map((d) => d?.name),
      ['Work laptop', `Passkey ${today()}`],
    );

    // The same credential id again (a fresh challenge): refused, recorded, nothing stored.
    const again = await addPasskey(browser, device, {
      answer: (o) => device.register(o, { credentialId: device.credentials[0]!.id }),
    });
    assert.equal(again.headers.get('location'), '/account?passkey=registered#passkeys');
    // Made for another origin: refused.
    const elsewhere = await addPasskey(browser, device, {
      answer: (o) => device.register(o, { origin: 'http://localhost.example' }),
    });
    assert.equal(elsewhere.headers.get('location'), '/account?passkey=failed#passkeys');
    assert.equal((await server.store.listPasskeys(user.id)).length, 2);
    assert.deepEqual(
      (await events(user.id, 'passkey.add_failed')).map((d) => d?.reason),
      ['wrong_origin', 'already_registered'],
    );
  });

  it('a registration is answered once', async () => {
    const user = await newUser(server);
    const browser = new BrowserSim(server.issuer);
    await passwordSignIn(browser, user);
    const page = await (await browser.request('/account')).text();
    const device = authenticator();
    const form = {
      csrf: BrowserSim.hidden(page, 'csrf'),
      response: JSON.stringify(device.register(pageOptions(page, 'register'))),
    };
    const first = await browser.request('/account/passkeys', { form });
    assert.equal(first.headers.get('location'), '/account?passkey=added#passkeys');
    // The same answer again: refused as replayed before its credential is even looked at.
    const replayed = await browser.request('/account/passkeys', { form });
    assert.equal(replayed.headers.get('location'), '/account?passkey=failed#passkeys');
    assert.equal((await server.store.listPasskeys(user.id)).length, 1);
    assert.deepEqual(
      (await events(user.id, 'passkey.add_failed')).map((d) => d?.reason),
      ['replayed'],
    );
  });

  it('adding and removing need a sign-in of the last 5 minutes; renaming does not', async () => {
    const user = await newUser(server);
    const browser = new BrowserSim(server.issuer);
    await passwordSignIn(browser, user);
    const device = authenticator();
    // A registration begun while the sign-in was recent is kept, even if answered after the 5 minutes.
    const page = await (await browser.request('/account')).text();
    server.clock.offset = 6 * 60;
    try {
      const form = {
        csrf: BrowserSim.hidden(page, 'csrf'),
        response: JSON.stringify(device.register(pageOptions(page, 'register'))),
      };
      const added = await browser.request('/account/passkeys', { form });
      assert.equal(added.headers.get('location'), '/account?passkey=added#passkeys');
      const [passkey] = await server.store.listPasskeys(user.id);
      const stale = await (await browser.request('/account')).text();
      assert.doesNotMatch(stale, /data-passkey="register"/);
      assert.match(stale, /To add or remove a passkey, <a href="\/account\/login\?reauth=1">sign in again<\/a>/);
      const removal = await browser.request('/account/passkeys/remove', {
        form: { csrf: await csrf(browser), id: passkey!.id },
      });
      assert.equal(removal.headers.get('location'), '/account/login?reauth=1');
      const reauth = await (await browser.request('/account/login?reauth=1')).text();
      assert.match(reauth, /role="status">To change how you sign in, sign in again first\./);
      assert.equal((await server.store.listPasskeys(user.id)).length, 1);
      const renamed = await browser.request('/account/passkeys/rename', {
        form: { csrf: await csrf(browser), id: passkey!.id, name: 'Phone' },
      });
      assert.equal(renamed.headers.get('location'), '/account?passkey=renamed#passkeys');
      assert.equal((await server.store.listPasskeys(user.id))[0]!.name, 'Phone');
      assert.deepEqual(await events(user.id, 'passkey.renamed'), [{ passkey: passkey!.id, name: 'Phone' }]);
    } finally {
      server.clock.offset = 0;
    }
  });

  it("a name is needed, and nobody renames another user's passkey", async () => {
    const [alice, bob] = [await newUser(server), await newUser(server)];
    const [a, b] = [new BrowserSim(server.issuer), new BrowserSim(server.issuer)];
    await passwordSignIn(a, alice);
    await passwordSignIn(b, bob);
    await addPasskey(a, authenticator(), { name: 'Key' });
    const [passkey] = await server.store.listPasskeys(alice.id);
    for (const [browser, name] of [
      [a, ' \t '],
      [b, 'Mine now'],
    ] as const) {
      const answer = await browser.request('/account/passkeys/rename', {
        form: { csrf: await csrf(browser), id: passkey!.id, name },
      });
      assert.equal(answer.headers.get('location'), '/account?passkey=no-name#passkeys');
    }
    const removal = await b.request('/account/passkeys/remove', { form: { csrf: await csrf(b), id: passkey!.id } });
    assert.equal(removal.headers.get('location'), '/account#passkeys');
    assert.deepEqual(
      (await server.store.listPasskeys(alice.id)).map((p) => p.name),
      ['Key'],
    );
    assert.deepEqual(await events(alice.id, 'passkey.renamed'), []);
  });

  it("removing a passkey ends the user's other sessions, and never removes the last way in", async () => {
    const user = await newUser(server);
    const here = new BrowserSim(server.issuer);
    await passwordSignIn(here, user);
    const device = authenticator();
    await addPasskey(here, device, { name: 'Laptop' });
    await addPasskey(here, device, { name: 'Phone' });
    // Elsewhere, signed in with the laptop's passkey.
    const there = new BrowserSim(server.issuer);
    const laptop = device.credentials[0]!;
    assert.equal(
      (await passkeySignIn(there, (o) => device.authenticate(o, { credential: laptop }))).response.status,
      303,
    );
    assert.equal(await signedIn(there), true);
    const [first, second] = await server.store.listPasskeys(user.id);
    assert.ok(first!.lastUsedAt !== null && second!.lastUsedAt === null);
    assert.match(
      await (await here.request('/account')).text(),
      /Added \w+ \d+, \d{4}, last used \w+ \d+, \d{4} at \d\d:\d\d [AP]M UTC;/,
    );

    const removed = await here.request('/account/passkeys/remove', { form: { csrf: await csrf(here), id: first!.id } });
    assert.equal(removed.headers.get('location'), '/account?passkey=removed#passkeys');
    assert.equal(await signedIn(there), false, 'the other session ended');
    assert.equal(await signedIn(here), true, 'this one stays');
    assert.deepEqual(await events(user.id, 'passkey.removed'), [{ passkey: first!.id, name: 'Laptop' }]);
    const page = await (await here.request('/account?passkey=removed')).text();
    assert.match(page, /The passkey has been removed, and your other sessions have ended\./);
    assert.doesNotMatch(page, /Laptop/);

    // Without a password, the one passkey left is the only way in: it stays.
    const db = await server.db();
    await db.updateTable('users').set({ password_hash: null }).where('id', '=', user.id).execute();
    const last = await here.request('/account/passkeys/remove', { form: { csrf: await csrf(here), id: second!.id } });
    assert.equal(last.headers.get('location'), '/account?passkey=last#passkeys');
    assert.equal((await server.store.listPasskeys(user.id)).length, 1);
  });

  it('the operator sees them in `users show`, and `users delete` takes them along', async () => {
    const user = await newUser(server);
    const browser = new BrowserSim(server.issuer);
    await passwordSignIn(browser, user);
    await addPasskey(browser, authenticator(), { name: 'YubiKey' });
    const [passkey] = await server.store.listPasskeys(user.id);
    const text = cliIo(server);
    assert.equal(await run(['users', 'show', user.username], text.io), 0);
    assert.ok(text.lines.includes('passkeys       1'), text.lines.join('\n'));
    assert.match(
      text.lines.join('\n'),
      new RegExp(`  ${passkey!.id}  YubiKey  \\(added ${today()}T[\\d:.]+Z, not used yet, device-bound\\)`),
    );
    const json = cliIo(server);
    assert.equal(await run(['users', 'show', user.username, '--json'], json.io), 0);
    const shown = JSON.parse(json.lines.join('\n')) as { passkeys: Array<Record<string, unknown>> };
    assert.deepEqual(Object.keys(shown.passkeys[0]!), [
      'id',
      'name',
      'created_at',
      'last_used_at',
      'synced',
      'suspended_at',
    ]);
    assert.equal(await run(['users', 'delete', user.username], cliIo(server).io), 0);
    const db = await server.db();
    const rows = await db.selectFrom('passkeys').select('id').where('user_id', '=', user.id).execute();
    assert.deepEqual(rows, []);
  });
});
