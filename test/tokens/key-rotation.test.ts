// Signing-key rotation with zero downtime, seen from two instances over one database (SQLite and
// PostgreSQL) with their clocks injected and their reloads out of step: at every moment of a staged
// rotation, a token signed by either instance verifies against the JWKS each instance serves and
// against any copy still fresh by its Cache-Control; the retired key leaves once its tokens have
// expired; automatic rotation happens once across instances; `--now` is the emergency path.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, type JWK, jwtVerify } from 'jose';
import { CLI } from '../../src/events/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/store.ts';
import { signAccessToken } from '../../src/tokens/jwt.ts';
import { removeExpiredKeys, rotateIfDue, rotateKey } from '../../src/tokens/key-rotation.ts';
import { JWKS_MAX_AGE, type KeyTimeline, retiredFor, stageDelay } from '../../src/tokens/key-timeline.ts';
import { KeyStore } from '../../src/tokens/keystore.ts';
import { type TestDatabase, withPostgresDatabase, withSqliteDatabase } from '../store/databases.ts';

const SECRET = 'a-secret-of-at-least-thirty-two-characters';
const T0 = 1_900_000_000;
const ISSUER = 'https://id.example';

async function sign(keys: KeyStore, now: number): Promise<string> {
  return signAccessToken(keys, {
    issuer: ISSUER,
    audience: ISSUER,
    subject: 'u',
    clientId: 'c',
    scope: 'openid',
    grantId: 'g',
    authTime: now,
    now,
    ttl: 60,
    alg: 'ES256',
  });
}

const keySets = new WeakMap<object, ReturnType<typeof createLocalJWKSet>>();

async function verifies(token: string, jwks: { keys: JWK[] }, now: number): Promise<boolean> {
  let keySet = keySets.get(jwks);
  if (!keySet) keySets.set(jwks, (keySet = createLocalJWKSet(jwks)));
  try {
    await jwtVerify(token, keySet, { issuer: ISSUER, currentDate: new Date(now * 1000) });
    return true;
  } catch {
    return false;
  }
}

const kidOf = (token: string) =>
  (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;

for (const [name, open] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`signing-key rotation, two instances (${name})`, async () => {
    const database: TestDatabase | undefined = await open();
    const skip = !database && 'PostgreSQL unreachable';
    let stores: Store[] = [];
    const clock = { now: T0 };
    const timeline: KeyTimeline = { reloadInterval: 60, tokenLifetime: 600, rotationInterval: 0 };
    const instances = async (t: KeyTimeline = timeline) =>
      Promise.all(stores.map((store) => KeyStore.open(store, SECRET, { timeline: t, now: () => clock.now })));
    before(async () => {
      if (!database) return;
      stores = [await openStore(database.url), await openStore(database.url)];
      await stores[0]!.migrate();
    });
    after(async () => {
      for (const store of stores) await store.close();
      await database?.drop();
    });

    it('two instances starting on an empty database make one key per algorithm', { skip }, async () => {
      await instances();
      const rows = await stores[0]!.listSigningKeys();
      assert.deepEqual(rows.map((r) => r.alg).sort(), ['ES256', 'RS256']);
    });

    it('a staged rotation: every token verifies everywhere at every moment', { skip }, async () => {
      const [a, b] = await instances();
      const before = a!.signingKey('ES256').kid;
      const snapshots: Array<{ at: number; jwks: { keys: JWK[] } }> = [];
      const end = T0 + stageDelay(timeline) + retiredFor(timeline) + 2 * timeline.reloadInterval + 100;
      let rotated: string | undefined;
      const signers = new Set<string>();
      for (clock.now = T0; clock.now <= end; clock.now += 10) {
        // Each instance re-reads the keys every 60 s, B half a period after A.
        if ((clock.now - T0) % 60 === 0) await a!.reload();
        if ((clock.now - T0) % 60 === 30) await b!.reload();
        if (clock.now === T0 + 100) rotated = (await rotateKey(a!, 'ES256', { requester: CLI })).kid;
        for (const instance of [a!, b!]) snapshots.push({ at: clock.now, jwks: structuredClone(instance.jwks()) });
        while (clock.now - snapshots[0]!.at >= JWKS_MAX_AGE) snapshots.shift();
        for (const [who, instance] of [
          ['A', a!],
          ['B', b!],
        ] as const) {
          const token = await sign(instance, clock.now);
          signers.add(kidOf(token));
          for (const [whose, server] of [
            ['A', a!],
            ['B', b!],
          ] as const) {
            assert.ok(
              await verifies(token, server.jwks(), clock.now),
              `t+${clock.now - T0}: ${who}'s token, ${whose}'s JWKS`,
            );
          }
          for (const copy of snapshots) {
            assert.ok(
              await verifies(token, copy.jwks, clock.now),
              `t+${clock.now - T0}: ${who}'s token, copy of t+${copy.at - T0}`,
            );
          }
        }
      }
      // Both switched to the new key, and the old one has left the JWKS and the database.
      assert.ok(rotated && rotated !== before);
      assert.deepEqual([...signers].sort(), [before, rotated].sort());
      assert.equal(a!.signingKey('ES256').kid, rotated);
      assert.equal(b!.signingKey('ES256').kid, rotated);
      assert.ok(!a!.jwks().keys.some((k) => k.kid === before));
      assert.deepEqual(await removeExpiredKeys(a!), [before]);
      assert.ok(!(await stores[0]!.listSigningKeys()).some((k) => k.kid === before));
      const events = await stores[0]!.listEvents({ type: 'key.rotated' });
      assert.equal(events[0]!.data?.kid, rotated);
    });

    it('automatic rotation: due on both instances at once, made by one', { skip }, async () => {
      const auto = { ...timeline, rotationInterval: 3600 };
      const [a, b] = await instances(auto);
      const count = async () => (await stores[0]!.listSigningKeys()).length;
      const keysBefore = await count();
      assert.deepEqual(await rotateIfDue(a!), []);
      clock.now += 3600;
      const [ra, rb] = await Promise.all([rotateIfDue(a!), rotateIfDue(b!)]);
      assert.equal(await count(), keysBefore + 2, 'one new key per algorithm');
      assert.equal(new Set([...ra!, ...rb!].map((r) => r.kid)).size, 2, 'the instances report the same two keys');
      assert.equal([...ra!, ...rb!].filter((r) => !r.already).length, 2);
      const states = a!.states().filter((s) => s.state === 'next');
      assert.equal(states.length, 2);
      assert.deepEqual(await rotateIfDue(b!), [], 'a staged rotation is not started again');
    });

    it('--now: the new key signs at once; another instance that meets its kid reloads', { skip }, async () => {
      clock.now += 10_000;
      const [a, b] = await instances();
      const r = await rotateKey(a!, 'ES256', { emergency: true, requester: CLI });
      assert.equal(a!.signingKey('ES256').kid, r.kid);
      const token = await sign(a!, clock.now);
      assert.equal(kidOf(token), r.kid);
      clock.now += 10;
      assert.equal(b!.verificationKey(r.kid), undefined, 'not yet known there');
      const deadline = Date.now() + 2000;
      while (!b!.verificationKey(r.kid)) {
        assert.ok(Date.now() < deadline, 'the unknown kid made B reload');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.ok(await verifies(token, b!.jwks(), clock.now));
      assert.equal(b!.signingKey('ES256').kid, r.kid);
    });
  });
}
