// A slow receiver cannot hold up anyone else's webhooks: users point forty webhooks (ten each, the
// most they may have) at a receiver that hangs, make events for them, and the operator's alert,
// queued after them, still arrives while those requests hang; the receiver never sees more than a
// few requests at once. The worker runs as in production (start(), its own interval).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { run } from '../../src/cli/main.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { WebhookDelivery } from '../../src/webhooks/delivery.ts';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { cliIo, PASSWORD, startServer, type TestServer } from '../helpers/server.ts';
import { Receiver } from '../helpers/webhook-receiver.ts';
import { accessTokenOf } from '../helpers/tokens.ts';

async function signInAtAccountPage(server: TestServer, username: string) {
  const browser = new BrowserSim(server.issuer);
  const page = await (await browser.request('/account/login')).text();
  const answer = await browser.request('/account/login', {
    form: { csrf: BrowserSim.hidden(page, 'csrf'), username, password: PASSWORD },
  });
  assert.equal(answer.headers.get('location'), '/account');
}

describe('webhook delivery with a receiver that hangs', () => {
  let server: TestServer;
  let delivery: WebhookDelivery | undefined;
  const slow = new Receiver(true);
  const operator = new Receiver(false);

  before(async () => {
    server = await startServer({ env: { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    await slow.start();
    await operator.start();
  });
  after(async () => {
    slow.release();
    await delivery?.stop();
    await slow.stop();
    await operator.stop();
    await server?.close();
  });

  it("forty slow webhooks do not delay the operator's delivery", async () => {
    const users = ['mallory1', 'mallory2', 'mallory3', 'mallory4'];
    for (const username of users) {
      await createUser(server.store, null, {
        username,
        email: `${username}@example.com`,
        passwordHash: await hashPassword(PASSWORD),
      });
      const token = await accessTokenOf(server, { username, password: PASSWORD }, 'openid webhooks');
      for (let i = 0; i < 10; i++) {
        const created = await fetch(`${server.issuer}/api/webhooks`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url: `${slow.url}?${i}`, events: ['user.signed_in'] }),
        });
        assert.equal(created.status, 201);
      }
    }
    const { io, lines } = cliIo(server);
    io.env = { ...io.env, TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' };
    const args = ['webhooks', 'create', '--url', operator.url, '--events', 'user.disabled'];
    assert.equal(await run(args, io), 0, lines.join('\n'));
    // Forty deliveries to the slow receiver, then the operator's, in that order in the outbox.
    for (const username of users) await signInAtAccountPage(server, username);
    assert.equal(await run(['users', 'disable', server.user.username], io), 0);

    delivery = new WebhookDelivery(server.store, {
      secret: server.secret,
      allowPrivate: true,
      interval: 0.1,
      log: { info() {}, warn() {}, error() {} },
    });
    delivery.start();
    // The operator's alert arrives while the slow receiver still holds every request it got.
    const deadline = Date.now() + 5_000;
    while (operator.received.length === 0 && Date.now() < deadline) await sleep(20);
    assert.equal(operator.received.length, 1, 'the operator got the alert within a few seconds');
    assert.match(operator.received[0]!, /"type":"user.disabled"/);
    // On a busy machine the users' lane may not have begun yet: it has once the slow receiver holds a
    // request, and none of what it holds has been answered.
    const begun = Date.now() + 5_000;
    while (slow.open === 0 && Date.now() < begun) await sleep(20);
    assert.ok(slow.open > 0 && slow.held.length === slow.open, 'the slow receiver still hangs');
    assert.ok(slow.mostOpen <= 4, `at most 4 requests at once to one receiver (${slow.mostOpen})`);
    // Released, the slow receiver gets the rest in turn.
    const until = Date.now() + 20_000;
    while (slow.received.length < 40 && Date.now() < until) {
      slow.release();
      await sleep(20);
    }
    assert.equal(slow.received.length, 40);
  });
});
