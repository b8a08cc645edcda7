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

const grantColumns = (withoutRowid: boolean) => (db: Builder, name: string) => db.schema
  .createTable(name)
  .addColumn('id', 'text', (c) => c.primaryKey())
  .addColumn('user_id', 'text', (c) => c.notNull())
  .addColumn('client_id', 'text', (c) => c.notNull())
  .addColumn('scope', 'text', (c) => c.notNull())
  .addColumn('auth_time', 'bigint', (c) => c.notNull())
  .addColumn('created_at', 'bigint', (c) => c.notNull())
  .addColumn('revoked_at', 'bigint')
  .$call((b) => (withoutRowid ? b.modifyEnd(sql`without rowid`) : b))
  .execute();

const refreshTokenColumns = (withoutRowid: boolean) => (db: Builder, name: string) => db.schema
  .createTable(name)
  .addColumn('token_hash', 'text', (c) => c.primaryKey())
  .addColumn('grant_id', 'text', (c) => c.notNull())
  .addColumn('client_id', 'text', (c) => c.notNull())
  .addColumn('user_id', 'text', (c) => c.notNull())
  .addColumn('scope', 'text', (c) => c.notNull())
  .addColumn('auth_time', 'bigint', (c) => c.notNull())
  .addColumn('created_at', 'bigint', (c) => c.notNull())
  .addColumn('expires_at', 'bigint', (c) => c.notNull())
  .addColumn('consumed_at', 'bigint')
  .$call((b) => (withoutRowid ? b.modifyEnd(sql`without rowid`) : b))
  .execute();

const GRANT_COLUMNS = ['id', 'user_id', 'client_id', 'scope', 'auth_time', 'created_at', 'revoked_at'];
const REFRESH_TOKEN_COLUMNS = ['token_hash', 'grant_id', 'client_id', 'user_id', 'scope', 'auth_time', 'created_at', 'expires_at', 'consumed_at'];

/** Replaces `table` by a copy made with `create` (its indexes go with the old table). */
async function rebuild(db: Builder, table: string, columns: string[], create: (db: Builder, name: string) => Promise<unknown>): Promise<void> {
  const copy = `${table}_rebuilt`;
  await create(db, copy);
  const list = sql.join(columns.map((c) => sql.ref(c)));
  await sql`insert into ${sql.table(copy)} (${list}) select ${list} from ${sql.table(table)}`.execute(db);
  await db.schema.dropTable(table).execute();
  await db.schema.alterTable(copy).renameTo(table).execute();
}

function isSqlite(db: Builder): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter;
}

/** Rebuilds grants and refresh_tokens as WITHOUT ROWID tables, or back as rowid tables, with their indexes. */
async function rebuildTables(db: Builder, withoutRowid: boolean): Promise<void> {
  await rebuild(db, 'grants', GRANT_COLUMNS, grantColumns(withoutRowid));
  await db.schema.createIndex('grants_user_id').on('grants').column('user_id').execute();
  await rebuild(db, 'refresh_tokens', REFRESH_TOKEN_COLUMNS, refreshTokenColumns(withoutRowid));
  await db.schema.createIndex('refresh_tokens_grant_id').on('refresh_tokens').column('grant_id').execute();
  await db.schema.createIndex('refresh_tokens_expires_at').on('refresh_tokens').column('expires_at').execute();
}

export async function up(db: Builder): Promise<void> {
  if (isSqlite(db)) await rebuildTables(db, true);
  else await db.schema.dropIndex('grants_revoked_at').execute();
  await db.schema.createIndex('grants_revoked_at').on('grants').column('revoked_at').where(sql.ref('revoked_at'), 'is not', null).execute();
}

export async function down(db: Builder): Promise<void> {
  if (isSqlite(db)) await rebuildTables(db, false);
  else await db.schema.dropIndex('grants_revoked_at').execute();
  await db.schema.createIndex('grants_revoked_at').on('grants').column('revoked_at').execute();
}
