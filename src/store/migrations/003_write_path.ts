// Fewer B-trees written per token request (bench/RESULTS.md, item 16). A commit writes every page it
// changed, and each code exchange or refresh adds a row to grants or refresh_tokens and an entry to
// each of their indexes:
// - grants_revoked_at indexes revoked grants only (housekeeping's `revoked_at < …` implies it), so a
//   new grant, never revoked, adds no entry to it;
// - on SQLite, grants and refresh_tokens become WITHOUT ROWID tables: the row is stored in its
//   primary key's B-tree instead of in a rowid table plus an index on the key. The tables are
//   copied, once; PostgreSQL has no such choice and keeps its tables.
import { type Kysely, SqliteAdapter, sql } from 'kysely';

type Builder = Kysely<unknown>;

/**
 * SQLite's own recipe for a change ALTER TABLE cannot make (sqlite.org/lang_altertable.html, "Making
 * Other Kinds Of Table Schema Changes"): the table's stored CREATE statement, changed by `change`,
 * under another name; the rows copied; the old table dropped and the new one renamed; its indexes
 * created again from their stored statements.
 */
async function rebuild(db: Builder, table: string, change: (create: string) => string): Promise<void> {
  const { rows } = await sql<{ type: string; sql: string }>`select type, sql from sqlite_master where tbl_name = ${table} and sql is not null`.execute(db);
  const copy = `${table}_rebuilt`;
  const create = change(rows.find((r) => r.type === 'table')!.sql).replace(`"${table}"`, `"${copy}"`);
  await sql.raw(create).execute(db);
  await sql`insert into ${sql.table(copy)} select * from ${sql.table(table)}`.execute(db);
  await db.schema.dropTable(table).execute();
  await db.schema.alterTable(copy).renameTo(table).execute();
  for (const index of rows.filter((r) => r.type === 'index')) await sql.raw(index.sql).execute(db);
}

async function rebuildTables(db: Builder, change: (create: string) => string): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return;
  await rebuild(db, 'grants', change);
  await rebuild(db, 'refresh_tokens', change);
}

export async function up(db: Builder): Promise<void> {
  await db.schema.dropIndex('grants_revoked_at').execute();
  await rebuildTables(db, (create) => `${create} without rowid`);
  await db.schema.createIndex('grants_revoked_at').on('grants').column('revoked_at').where(sql.ref('revoked_at'), 'is not', null).execute();
}

export async function down(db: Builder): Promise<void> {
  await db.schema.dropIndex('grants_revoked_at').execute();
  await rebuildTables(db, (create) => create.replace(/ without rowid$/, ''));
  await db.schema.createIndex('grants_revoked_at').on('grants').column('revoked_at').execute();
}
