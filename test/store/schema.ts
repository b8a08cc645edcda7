// A database's schema as the previous release depends on it (tables, their columns' types, whether
// they take NULL and have a default; indexes), and what a migration took away from it: what would
// break the previous release running on the migrated database (docs/upgrades.md, expand/contract).
import { type Kysely, sql } from 'kysely';

export interface Column {
  type: string;
  nullable: boolean;
  hasDefault: boolean;
}

export interface Schema {
  tables: Record<string, Record<string, Column>>;
  /** Index name: its table and its definition as the database gives it. */
  indexes: Record<string, { table: string; definition: string }>;
}

export async function snapshot(db: Kysely<unknown>, dialect: 'SQLite' | 'PostgreSQL'): Promise<Schema> {
  const tables: Schema['tables'] = {};
  for (const table of await db.introspection.getTables()) {
    if (table.isView) continue;
    tables[table.name] = Object.fromEntries(
      table.columns.map((c) => [
        c.name,
        { type: c.dataType.toLowerCase(), nullable: c.isNullable, hasDefault: c.hasDefaultValue },
      ]),
    );
  }
  const { rows } =
    dialect === 'SQLite'
      ? await sql<{ name: string; table: string; definition: string }>`select name, tbl_name as "table",
          sql as definition from sqlite_master where type = 'index' and sql is not null`.execute(db)
      : await sql<{ name: string; table: string; definition: string }>`select indexname as name,
          tablename as "table", indexdef as definition from pg_indexes where schemaname = current_schema()`.execute(db);
  const indexes: Schema['indexes'] = {};
  for (const row of rows)
    if (!row.table.startsWith('tessera_migration'))
      indexes[row.name] = { table: row.table, definition: row.definition.replace(/\s+/g, ' ').trim() };
  return { tables, indexes };
}

/**
 * What `after` took away from `before`, or made stricter, one line each: the previous release reads
 * and writes the schema `before` had, and each of these breaks it.
 */
export function contractions(before: Schema, after: Schema): string[] {
  const found: string[] = [];
  for (const [table, columns] of Object.entries(before.tables)) {
    const now = after.tables[table];
    if (!now) {
      found.push(`drops table ${table}`);
      continue;
    }
    for (const [name, was] of Object.entries(columns)) {
      const column = now[name];
      if (!column) {
        found.push(`drops column ${table}.${name}`);
        continue;
      }
      if (column.type !== was.type) found.push(`changes the type of ${table}.${name} (${was.type} to ${column.type})`);
      if (was.nullable && !column.nullable) found.push(`makes ${table}.${name} NOT NULL`);
      if (was.hasDefault && !column.hasDefault) found.push(`removes the default of ${table}.${name}`);
    }
    // The previous release inserts rows without the columns it does not know.
    for (const [name, column] of Object.entries(now))
      if (!(name in columns) && !column.nullable && !column.hasDefault)
        found.push(`adds ${table}.${name} NOT NULL without a default`);
  }
  for (const [name, was] of Object.entries(before.indexes)) {
    const index = after.indexes[name];
    if (!index) found.push(`drops index ${name}`);
    else if (index.definition !== was.definition) found.push(`changes index ${name}`);
  }
  // A new unique index on a table the previous release writes can refuse what it writes.
  for (const [name, index] of Object.entries(after.indexes))
    if (!(name in before.indexes) && index.table in before.tables && /^create unique index/i.test(index.definition))
      found.push(`adds unique index ${name} to ${index.table}`);
  return found;
}
