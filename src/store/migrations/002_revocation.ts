// Access tokens revoked before they expire (RFC 7009), and the index housekeeping needs on grants.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('revoked_access_tokens')
    .addColumn('jti', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('revoked_access_tokens_expires_at').on('revoked_access_tokens').column('expires_at').execute();
  await db.schema.createIndex('grants_revoked_at').on('grants').column('revoked_at').execute();
  await db.schema.createIndex('consents_client_id').on('consents').column('client_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('consents_client_id').execute();
  await db.schema.dropIndex('grants_revoked_at').execute();
  await db.schema.dropTable('revoked_access_tokens').execute();
}
