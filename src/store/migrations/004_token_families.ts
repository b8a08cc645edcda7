// One row per token family (bench/RESULTS.md, item 26). The grant holds the state of its refresh
// tokens (src/tokens/refresh.ts): the generation of the current token, when it expires, and when it
// was issued (the previous one rotated away). A code exchange then writes one row, and a refresh
// updates it, instead of adding a refresh token row and consuming another. Refresh tokens issued
// before stay in refresh_tokens and are accepted until they expire; the first rotation of one moves
// its family into the grant. Grants created before this migration keep a null generation.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('grants').addColumn('refresh_generation', 'integer').execute();
  await db.schema.alterTable('grants').addColumn('refresh_expires_at', 'bigint').execute();
  await db.schema.alterTable('grants').addColumn('refresh_issued_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['refresh_issued_at', 'refresh_expires_at', 'refresh_generation']) {
    await db.schema.alterTable('grants').dropColumn(column).execute();
  }
}
