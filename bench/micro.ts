// Micro-benchmarks behind the choices in bench/RESULTS.md (items 10 and 11): CPU per operation of
// the ways to make an ES256 signature, and of SQLite writes and reads through Kysely and through
// statements prepared once. `node bench/micro.ts` (about 30 s); not part of `npm test`.
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/index.ts';
import type { Grant } from '../src/store/grants.ts';
import type { GrantRow } from '../src/store/tables.ts';
import { ecdsaDerToJose } from '../src/tokens/jwt.ts';
import { newSortableId } from '../src/tokens/opaque.ts';

/** CPU (user + system) per call of `f`, in µs, over `n` calls after a warm-up. */
async function cpuPerCall(n: number, f: () => unknown): Promise<number> {
  for (let i = 0; i < Math.min(200, n); i++) await f();
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await f();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

function report(label: string, us: number): void {
  console.log(`${label.padEnd(74)} ${us.toFixed(1).padStart(7)} µs`);
}

// ES256: the signature of a JWT-sized input, four ways.
{
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const data = Buffer.from('x'.repeat(600));
  const p1363 = { key: privateKey, dsaEncoding: 'ieee-p1363' as const };
  const onPool = (key: KeyObject | typeof p1363) =>
    new Promise((resolve, reject) => sign('sha256', data, key, (err, sig) => (err ? reject(err) : resolve(sig))));
  console.log('ES256 signature, CPU of the whole process per signature:');
  report(
    '  sign(key) then ecdsaDerToJose, on the event loop (what Tessera does)',
    await cpuPerCall(5000, () => ecdsaDerToJose(sign('sha256', data, privateKey), 32)),
  );
  report(
    "  sign({ key, dsaEncoding: 'ieee-p1363' }), on the event loop",
    await cpuPerCall(5000, () => sign('sha256', data, p1363)),
  );
  report(
    '  sign(key, callback) on the thread pool, then ecdsaDerToJose',
    await cpuPerCall(3000, async () => ecdsaDerToJose((await onPool(privateKey)) as Buffer, 32)),
  );
  report(
    "  sign({ key, dsaEncoding: 'ieee-p1363' }, callback) on the thread pool",
    await cpuPerCall(3000, () => onPool(p1363)),
  );
}

// SQLite: a code redemption (the grant's insert in a savepoint) in batches of 8 sharing one commit,
// and a read by key; through the store as shipped and through bare prepared statements.
{
  const dir = mkdtempSync(join(tmpdir(), 'tessera-micro-'));
  try {
    const now = 1_800_000_000;
    const grantRow = (): GrantRow => ({
      id: newSortableId(),
      user_id: 'user-0',
      client_id: 'bench-client',
      scope: 'openid profile email apps webhooks',
      auth_time: now,
      created_at: now,
      revoked_at: null,
      refresh_generation: 1,
      refresh_expires_at: now + 86400,
      refresh_issued_at: now,
      resource: null,
      amr: 'pwd',
      acr: 'urn:tessera:acr:sfa',
      sid: null,
    });
    const newGrant = (): Grant => ({
      id: newSortableId(),
      userId: 'user-0',
      clientId: 'bench-client',
      scope: 'openid profile email apps webhooks',
      authTime: now,
      createdAt: now,
      revokedAt: null,
      refreshGeneration: 1,
      refreshExpiresAt: now + 86400,
      refreshIssuedAt: now,
      resource: null,
      amr: 'pwd',
      acr: 'urn:tessera:acr:sfa',
      sid: null,
    });
    const store = await openStore(`sqlite:${join(dir, 'store.db')}`, { thread: 'current' });
    await store.migrate();
    await store.createUser({
      id: 'user-0',
      username: 'user-0',
      email: 'u@example.com',
      emailVerified: true,
      name: 'U',
      givenName: null,
      familyName: null,
      passwordHash: null,
      disabled: false,
      createdAt: now,
      updatedAt: now,
      roles: [],
    });
    console.log('SQLite (synchronous=FULL), CPU per operation:');
    report(
      '  code redemption through the store (group commit), batches of 8',
      (await cpuPerCall(500, () =>
        Promise.all(Array.from({ length: 8 }, () => store.redeemAuthorizationCode({ grant: newGrant() }))),
      )) / 8,
    );
    const kyselyRead = await cpuPerCall(20000, () => store.getUserById('user-0'));
    await store.close();

    const db = new DatabaseSync(join(dir, 'store.db'));
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL');
    const statement = (table: string, n: number) =>
      db.prepare(`insert into ${table} values (${Array.from({ length: n }, () => '?').join(', ')})`);
    const grant = statement('grants', 10);
    const [begin, commit, savepoint, release] = ['begin', 'commit', 'savepoint s', 'release s'].map((s) =>
      db.prepare(s),
    ) as [
      ReturnType<typeof db.prepare>,
      ReturnType<typeof db.prepare>,
      ReturnType<typeof db.prepare>,
      ReturnType<typeof db.prepare>,
    ];
    const batch = () => {
      begin.run();
      for (let i = 0; i < 8; i++) {
        savepoint.run();
        grant.run(...Object.values(grantRow()));
        release.run();
      }
      commit.run();
    };
    report('  code redemption as bare prepared statements, batches of 8', (await cpuPerCall(500, batch)) / 8);
    report('  read a user by id through Kysely', kyselyRead);
    const byId = db.prepare('select * from users where id = ?');
    report(
      '  read a user by id, bare prepared statement (what the event loop does)',
      await cpuPerCall(20000, () => byId.get('user-0')),
    );
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
