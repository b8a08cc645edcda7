// Mail bombing: mails with a link are limited per recipient, not only per account. Many accounts
// asking to change their address to one victim's send it at most the recipient's allowance (five an
// hour), whatever the case or `+tag` of the address typed, and a different address still gets its
// mail; accounts that share an address and each ask for a reset likewise; sign-up to one mailbox
// under many `+tags`, at most its three. The askers see the refusal an account's own limit gives.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mailboxOf } from '../../src/account/email.ts';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { newId } from '../../src/tokens/opaque.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { Mailbox } from '../helpers/mailbox.ts';
import { newUser, passwordSignIn } from '../helpers/passkeys.ts';
import { PASSWORD, startServer, type TestServer } from '../helpers/server.ts';

describe('mails limited per recipient across accounts', () => {
  let server: TestServer;
  let mailbox: Mailbox;
  before(async () => {
    server = await startServer({ env: { TESSERA_SIGNUP: 'open' } });
    mailbox = new Mailbox(server);
  });
  after(async () => {
    await mailbox?.close();
    await server?.close();
  });

  /** The mails delivered to `address`'s mailbox (any case, any +tag). */
  async function mailsTo(address: string) {
    await mailbox.to(address);
    return mailbox.sent.filter((m) => mailboxOf(m.to) === mailboxOf(address));
  }

  /** A new account, signed in, asks to change its address to `email`: the account page's note. */
  async function askChange(email: string): Promise<string | null> {
    const user = await newUser(server);
    const browser = new BrowserSim(server.issuer);
    await passwordSignIn(browser, user);
    const page = await (await browser.request('/account')).text();
    const form = { csrf: BrowserSim.hidden(page, 'csrf'), email };
    const answer = await browser.request('/account/email', { form });
    assert.equal(answer.status, 303);
    return new URL(answer.headers.get('location')!, server.issuer).searchParams.get('email');
  }

  it('eight accounts asking for one new address send it five mails; another address still gets its own', async () => {
    const typed = [
      'victim@example.net',
      'Victim@Example.NET',
      'victim+1@example.net',
      'victim+news@example.net',
      'VICTIM+x@example.net',
      'victim@example.net',
      'victim+2@example.net',
      'victim+3@example.net',
    ];
    const notes: Array<string | null> = [];
    for (const email of typed) notes.push(await askChange(email));
    assert.deepEqual(notes, ['sent', 'sent', 'sent', 'sent', 'sent', 'refused', 'refused', 'refused']);
    assert.equal((await mailsTo('victim@example.net')).length, 5);
    // Another address, asked for now by another account: its mail goes.
    assert.equal(await askChange('someone-else@example.net'), 'sent');
    assert.equal((await mailsTo('someone-else@example.net')).length, 1);
    // In parallel too: of six accounts at once for one more address, five mails.
    const notesAtOnce = await Promise.all(Array.from({ length: 6 }, () => askChange('target@example.org')));
    assert.equal(notesAtOnce.filter((n) => n === 'sent').length, 5);
    assert.equal((await mailsTo('target@example.org')).length, 5);
  });

  it('accounts that share an address each asking for a reset: five mails, the same answer to all', async () => {
    const shared = 'shared-inbox@example.com';
    const names: string[] = [];
    for (let i = 0; i < 7; i++) {
      const username = `sharer-${newId().slice(0, 6).toLowerCase()}`;
      await createUser(server.store, server.config, {
        username,
        email: shared,
        passwordHash: await hashPassword(PASSWORD),
      });
      names.push(username);
    }
    const browser = new BrowserSim(server.issuer);
    const answers = new Set<string>();
    for (const identifier of names) {
      const page = await (await browser.request('/reset/request')).text();
      const answer = await browser.request('/reset/request', {
        form: { csrf: BrowserSim.hidden(page, 'csrf'), identifier },
      });
      assert.equal(answer.status, 200);
      answers.add((await answer.text()).replace(/name="csrf" value="[^"]*"/, ''));
    }
    assert.equal(answers.size, 1, 'the same page whether a mail was sent or not');
    assert.equal((await mailsTo(shared)).length, 5);
  });

  it('sign-up to one mailbox under many +tags: at most three mails', async () => {
    const browser = new BrowserSim(server.issuer);
    for (let i = 0; i < 5; i++) {
      const page = await (await browser.request('/signup')).text();
      const form = {
        csrf: BrowserSim.hidden(page, 'csrf'),
        username: `joiner-${i}-${newId().slice(0, 4).toLowerCase()}`,
        email: `joiner+${i}@example.org`,
        password: 'a brand new passphrase 42',
      };
      assert.equal((await browser.request('/signup', { form })).status, 200);
    }
    assert.equal((await mailsTo('joiner@example.org')).length, 3);
  });
});
