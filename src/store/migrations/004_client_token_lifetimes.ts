// Issue 32: a client's own token lifetimes (`tessera clients create|update --access-token-ttl …`),
// in seconds; null keeps the server's (TESSERA_ACCESS_TOKEN_TTL, …), which stay their ceiling. Read
// with the client, which the token endpoint has in hand (cached): no read of its own. Frozen: no
// current types.
import type { Kysely } from 'kysely';

const COLUMNS = ['access_token_ttl', 'refresh_token_ttl', 'id_token_ttl'];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of COLUMNS) await db.schema.alterTable('clients').addColumn(column, 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of [...COLUMNS].reverse()) await db.schema.alterTable('clients').dropColumn(column).execute();
}
