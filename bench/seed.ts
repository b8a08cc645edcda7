// Prepares Tessera's database for a benchmark: the client, the virtual users, and optionally a large
// population (users and live refresh tokens) for the scale test.
import { sql } from 'kysely';
import { createClient } from '../src/admin/clients.ts';
import { createUser } from '../src/admin/new-user.ts';
import { loadConfig } from '../src/config/index.ts';
import type { GrantRow } from '../src/store/tables.ts';
import { openDatabase, openStore } from '../src/store/index.ts';
import { KeyStore } from '../src/tokens/keystore.ts';
import { newId, newSortableId } from '../src/tokens/opaque.ts';
import { hashPassword } from '../src/authn/password/hash.ts';

export async function seedTessera(input: {
  databaseUrl: string;
  issuer: string;
  secret: string;
  redirectUri: string;
  users: number;
  extraUsers: number;
  extraRefreshTokens: number;
}): Promise<{ clientId: string; clientSecret: string; users: Array<{ username: string; password: string }> }> {
  const config = loadConfig({
    TESSERA_ISSUER: input.issuer,
    DATABASE_URL: input.databaseUrl,
    TESSERA_SECRET: input.secret,
  });
  const store = await openStore(input.databaseUrl);
  try {
    await store.migrate();
    await KeyStore.open(store, input.secret);
    const { client, clientSecret } = await createClient(store, config, {
      name: 'Benchmark client',
      redirectUris: [input.redirectUri],
      scopes: ['openid', 'profile', 'email', 'apps', 'webhooks'],
      public: false,
    });
    const password = 'benchmark password';
    const passwordHash = await hashPassword(password);
    const users = [];
    for (let i = 0; i < input.users; i++) {
      await createUser(store, config, {
        username: `user-${i}`,
        email: `user-${i}@example.com`,
        name: `User ${i}`,
        passwordHash,
      });
      users.push({ username: `user-${i}`, password });
    }
    await fill(input.databaseUrl, client.clientId, passwordHash, input.extraUsers, input.extraRefreshTokens);
    return { clientId: client.clientId, clientSecret: clientSecret!, users };
  } finally {
    await store.close();
  }
}

/** Bulk rows in batches: users, and grants spread over them, each with a live refresh token. */
async function fill(
  databaseUrl: string,
  clientId: string,
  passwordHash: string,
  userCount: number,
  tokenCount: number,
): Promise<void> {
  if (userCount === 0 && tokenCount === 0) return;
  const db = openDatabase(databaseUrl);
  const now = Math.floor(Date.now() / 1000);
  const userIds: string[] = [];
  const BATCH = 500;
  for (let start = 0; start < userCount; start += BATCH) {
    const rows = [];
    for (let i = start; i < Math.min(userCount, start + BATCH); i++) {
      const id = newId();
      userIds.push(id);
      rows.push({
        id,
        username: `seed-${i}`,
        email: `seed-${i}@example.com`,
        email_verified: 1,
        name: `Seed ${i}`,
        given_name: null,
        family_name: null,
        password_hash: passwordHash,
        disabled: 0,
        created_at: now,
        updated_at: now,
        roles: '',
      });
    }
    await db.insertInto('users').values(rows).execute();
  }
  for (let start = 0; start < tokenCount; start += BATCH) {
    const grants: GrantRow[] = [];
    for (let i = start; i < Math.min(tokenCount, start + BATCH); i++) {
      // Grants as Tessera makes them, a second apart in the past.
      const grantId = newSortableId((now - tokenCount + i) * 1000);
      const userId = userIds[i % Math.max(1, userIds.length)] ?? 'nobody';
      grants.push({
        id: grantId,
        user_id: userId,
        client_id: clientId,
        scope: 'openid apps',
        auth_time: now,
        created_at: now,
        revoked_at: null,
        refresh_generation: 1,
        refresh_expires_at: now + 2_592_000,
        refresh_issued_at: now,
        resource: null,
        amr: 'pwd',
        acr: 'urn:tessera:acr:sfa',
        sid: null,
      });
    }
    await db.insertInto('grants').values(grants).execute();
  }
  if (!databaseUrl.startsWith('sqlite:')) await sql`analyze`.execute(db);
  await db.destroy();
}
