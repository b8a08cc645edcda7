// TESSERA_SECURITY_MAIL with the server's own mail worker (src/mail/start.ts): on by default, a password
// changed on the account page is told (here to the log: development without a mail server, with the
// browser named); off, nothing is written.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startMailDelivery } from '../../src/mail/start.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { passwordSignIn } from '../helpers/passkeys.ts';
import { startServer } from '../helpers/server.ts';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

describe('TESSERA_SECURITY_MAIL', () => {
  /** A password change on the account page, then one look of the server's own mail worker: the log. */
  async function changePasswordAndLook(env: Record<string, string>): Promise<string> {
    const server = await startServer({ env });
    const lines: string[] = [];
    const log = {
      info: (obj: object, msg: string) => lines.push(JSON.stringify({ ...obj, msg })),
      warn: (obj: object, msg: string) => lines.push(JSON.stringify({ ...obj, msg })),
      error: (obj: object, msg: string) => lines.push(JSON.stringify({ ...obj, msg })),
    };
    const delivery = startMailDelivery(server.store, server.config, server.secret, log);
    try {
      const browser = new BrowserSim(server.issuer, { 'user-agent': FIREFOX });
      assert.equal((await passwordSignIn(browser, server.user)).headers.get('location'), '/account');
      const page = await (await browser.request('/account')).text();
      const form = { csrf: BrowserSim.hidden(page, 'csrf'), current: server.user.password };
      await browser.request('/account/password', { form: { ...form, new: 'a brand new passphrase 42' } });
      await delivery!.runOnce();
      return lines.join('\n');
    } finally {
      await delivery?.stop();
      await server.close();
    }
  }

  it('on by default: the server’s own mail worker writes and sends it (to the log in development)', async () => {
    const log = await changePasswordAndLook({});
    assert.match(log, /Your password for 127\.0\.0\.1:\d+ was changed/);
    assert.match(log, /Firefox on Linux/);
  });

  it('off: none is written', async () => {
    const log = await changePasswordAndLook({ TESSERA_SECURITY_MAIL: 'off' });
    assert.doesNotMatch(log, /was changed/);
    assert.doesNotMatch(log, /mail \(development: not sent\)/);
  });
});
