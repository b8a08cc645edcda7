// The rules of the second hardening round alone, so that a failure points at the rule: the throttle's
// delays and addresses, Throttle.begin's bookkeeping, where a self-registered client may send a
// browser, and who hears what by webhook.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { securityEvent } from '../../src/events/index.ts';
import { webhookAudience } from '../../src/events/webhooks/audience.ts';
import { logoutReturnProblem, redirectsErrors } from '../../src/oauth/registration/trust.ts';
import { normalizeRedirectUri, redirectUriProblem } from '../../src/oauth/registration/redirect-rules.ts';
import { isRegisteredRedirectUri } from '../../src/oauth/redirect.ts';
import { admits } from '../../src/authn/throttle-rules.ts';
import {
  addressKey,
  blockedUntil,
  delaySteps,
  Throttle,
  type ThrottleCounter,
  type ThrottleState,
} from '../../src/authn/throttle.ts';
import type { Client } from '../../src/store/clients.ts';

const POLICY = { freeFailures: 5, lockAfter: 20, lockSeconds: 900, window: 43_200 };

describe('throttle rules', () => {
  it('the delay steps are the doubling delay from the free failures to the lock', () => {
    for (const policy of [POLICY, { ...POLICY, freeFailures: 50, lockAfter: 200 }, { ...POLICY, lockSeconds: 3 }]) {
      for (let failures = 0; failures <= policy.lockAfter + 2; failures++) {
        const expected =
          failures >= policy.lockAfter
            ? policy.lockSeconds
            : failures < policy.freeFailures
              ? 0
              : Math.min(2 ** (failures - policy.freeFailures), policy.lockSeconds);
        const until = blockedUntil({ key: 'k', failures, lastFailureAt: 1000 }, policy);
        assert.equal(until === 0 ? 0 : until - 1000, expected, `${failures} failures`);
      }
      assert.ok(delaySteps(policy).length <= 32, 'a short CASE, whatever the lock');
    }
  });

  it('an address key: IPv4 as it is, IPv6 by its /64, mapped and NAT64 addresses as IPv4', () => {
    assert.equal(addressKey('203.0.113.9'), '203.0.113.9');
    assert.equal(addressKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:0DB8:0001:0002:ffff::1'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(addressKey('::ffff:198.51.100.7'), '198.51.100.7');
    assert.equal(addressKey('64:ff9b::198.51.100.7'), '198.51.100.7');
    assert.equal(addressKey(null), 'unknown');
  });

  it('begin: everything admitted or nothing; success and failure do what each key says', async () => {
    const pending = new Map<string, number>();
    const calls: string[] = [];
    const refuse = new Set<string>();
    const state = (key: string, failures = 0): ThrottleState => ({
      key,
      failures,
      lastFailureAt: 100,
      pending: pending.get(key) ?? 0,
      pendingUntil: 130,
    });
    const store: ThrottleCounter = {
      async countAttempts({ keys }) {
        const states: ThrottleState[] = [];
        for (const { key } of keys) {
          if (refuse.has(key)) continue;
          pending.set(key, (pending.get(key) ?? 0) + 1);
          states.push(state(key));
        }
        return states;
      },
      async getThrottles(keys) {
        return keys.map((key) => state(key, 20));
      },
      async settleAttempts({ keys }) {
        calls.push(keys.map((k) => `${k.outcome} ${k.key}`).join('; '));
        for (const { key } of keys) pending.set(key, pending.get(key)! - 1);
        return keys.map((k) => state(k.key));
      },
    };
    const throttle = new Throttle(store);
    const keys = [
      { key: 'account:a', subject: 'a', policy: POLICY, onSuccess: 'clear' as const },
      { key: 'address:x', subject: 'address:x', policy: POLICY },
    ];
    const first = await throttle.begin(keys, 100);
    assert.ok(!first.refused);
    await first.succeeded();
    assert.deepEqual(calls, ['clear account:a; giveBack address:x'], 'one write');
    assert.equal(pending.get('address:x'), 0);

    refuse.add('account:a');
    const refused = await throttle.begin(keys, 100);
    assert.deepEqual(refused.refused, { key: 'account:a', locked: true, retryAfter: 900 });
    assert.equal(pending.get('address:x'), 0, 'the address admitted is given back: the attempt is not made');
  });

  it('admits: failures and live pending attempts within the free failures; past them, one at a time', () => {
    const state = (failures: number, pending: number, pendingUntil = 200) => ({
      key: 'k',
      failures,
      lastFailureAt: 100,
      pending,
      pendingUntil,
    });
    assert.ok(admits(undefined, POLICY, 100));
    assert.ok(admits(state(2, 2), POLICY, 100));
    assert.ok(!admits(state(2, 3), POLICY, 100), 'three in flight may be three more failures');
    assert.ok(admits(state(2, 3, 100), POLICY, 100), 'pending attempts whose lease is over count for nothing');
    assert.ok(!admits(state(5, 0), POLICY, 100), 'the delay after the fifth failure');
    assert.ok(admits(state(5, 0), POLICY, 101));
    assert.ok(!admits(state(5, 1), POLICY, 101), 'past the free failures, one in flight at a time');
    assert.ok(admits(state(25, 1), POLICY, 100 + POLICY.window), 'a stale count starts again');
  });
});

const client = (registeredVia: Client['registeredVia'], clientId = 'c1') => ({ registeredVia, clientId }) as Client;

describe('where a self-registered client may send a browser', () => {
  it('authorization errors: the operator’s anywhere registered, a document’s only to its own host', () => {
    assert.ok(redirectsErrors(client('operator'), 'https://anywhere.example/cb'));
    const doc = client('document', 'https://agent.example/client.json');
    assert.ok(redirectsErrors(doc, 'https://agent.example/cb'));
    assert.ok(!redirectsErrors(doc, 'https://evil.example/cb'));
    assert.ok(!redirectsErrors(doc, 'http://agent.example/cb'), 'https only');
    assert.ok(!redirectsErrors(doc, 'http://127.0.0.1:4000/cb'));
    assert.ok(!redirectsErrors(client('dynamic'), 'https://app.example/cb'));
  });

  it('logout: with an ID token the client was issued, and a document’s to its own host', () => {
    assert.equal(logoutReturnProblem(client('operator'), 'https://x.example/bye', false), undefined);
    assert.match(logoutReturnProblem(client('dynamic'), 'https://x.example/bye', false)!, /id_token_hint/);
    assert.equal(logoutReturnProblem(client('dynamic'), 'https://x.example/bye', true), undefined);
    const doc = client('document', 'https://agent.example/client.json');
    assert.match(logoutReturnProblem(doc, 'https://evil.example/bye', true)!, /host/);
    assert.equal(logoutReturnProblem(doc, 'https://agent.example/bye', true), undefined);
  });

  it('redirect URIs: printable ASCII, kept with scheme and host in lowercase, matched so', () => {
    for (const uri of [
      'https://a.example/\r\n',
      'https://a.example/a b',
      'https://a.example\\@b',
      'https://a.example/é',
    ]) {
      assert.ok(redirectUriProblem(uri), JSON.stringify(uri));
    }
    assert.equal(normalizeRedirectUri('HTTPS://App.Example:8443/Cb?X=Y'), 'https://app.example:8443/Cb?X=Y');
    assert.equal(normalizeRedirectUri('Com.Example.App:/Cb'), 'com.example.app:/Cb');
    assert.ok(isRegisteredRedirectUri(['https://app.example/Cb'], 'HTTPS://APP.example/Cb'));
    assert.ok(!isRegisteredRedirectUri(['https://app.example/Cb'], 'https://app.example/cb'));
    assert.ok(isRegisteredRedirectUri(['http://127.0.0.1/cb'], 'HTTP://127.0.0.1:5000/cb'));
  });
});

describe('who hears what by webhook', () => {
  const event = (type: Parameters<typeof securityEvent>[0]) =>
    securityEvent(type, 1, {
      userId: 'bob',
      clientId: 'alices-app',
      requester: { ip: '203.0.113.9', userAgent: 'ua' },
      data: { reason: 'wrong_password' },
    });

  it("an app's owner hears what follows a consent, and no sign-in of anyone's", () => {
    for (const type of ['user.sign_in_failed', 'user.signed_in', 'user.sign_in_throttled', 'user.locked'] as const) {
      assert.equal(webhookAudience(event(type)).appOf, null, type);
      assert.equal(webhookAudience(event(type)).user, 'bob', `${type}: bob's own webhooks hear it`);
    }
    for (const type of ['consent.granted', 'consent.withdrawn', 'token.revoked', 'refresh_token.reused'] as const) {
      const audience = webhookAudience(event(type));
      assert.equal(audience.appOf, 'alices-app', type);
      const data = (JSON.parse(audience.forAppOwner) as { data: Record<string, unknown> }).data;
      assert.equal(data.ip, undefined);
      assert.equal(data.user_agent, undefined);
    }
  });
});
