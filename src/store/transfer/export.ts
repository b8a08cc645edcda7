// `tessera export`: every table of ./tables.ts as JSON lines (./format.ts), read in one transaction
// (PostgreSQL's repeatable read, SQLite's read transaction), so the file is one moment's state.
import { type Kysely, sql } from 'kysely';
import type { Database } from '../tables.ts';
import { Checksum, FORMAT, type Header, type Trailer, VERSION } from './format.ts';
import { EXPORTED_TABLES, type ExportedTable, type Include } from './tables.ts';

/** Rows read at a time, in the key's order. */
const PAGE = 500;

// Tables and columns come from EXPORTED_TABLES, never from input.
type Loose = Kysely<Record<string, Record<string, unknown>>>;

async function* rowsOf(db: Loose, { table, key }: ExportedTable): AsyncGenerator<Record<string, unknown>> {
  let last: Record<string, unknown> | undefined;
  for (;;) {
    let query = db.selectFrom(table).selectAll();
    for (const column of key) query = query.orderBy(column);
    if (last) {
      const after = last;
      query = query.where((eb) =>
        key.length === 1
          ? eb(key[0]!, '>', after[key[0]!])
          : eb(sql`(${sql.join(key.map((c) => sql.ref(c)))})`, '>', sql`(${sql.join(key.map((c) => after[c]))})`),
      );
    }
    const rows = await query.limit(PAGE).execute();
    for (const row of rows) yield { ...row };
    if (rows.length < PAGE) return;
    last = rows.at(-1);
  }
}

/**
 * Writes the export to `write`, line by line (without the newline); the tables written only on
 * request (signing keys, events) as `include` says. Returns the rows written per table.
 */
export async function exportDatabase(
  db: Kysely<Database>,
  options: { include: ReadonlySet<Include>; now: Date },
  write: (line: string) => void,
): Promise<Record<string, number>> {
  const tables = EXPORTED_TABLES.filter((t) => t.only === undefined || options.include.has(t.only));
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const loose = trx as unknown as Loose;
      const applied = await sql<{ name: string }>`select name from tessera_migrations order by name`.execute(trx);
      const counts: Record<string, number> = {};
      for (const { table } of tables) {
        const { n } = await loose
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow();
        counts[table] = Number(n);
      }
      const checksum = new Checksum();
      const line = (value: object) => {
        const text = JSON.stringify(value);
        checksum.add(text);
        write(text);
      };
      const header: Header = {
        format: FORMAT,
        version: VERSION,
        exported_at: options.now.toISOString(),
        migrations: applied.rows.map((r) => r.name),
        tables: counts,
      };
      line(header);
      const written: Record<string, number> = {};
      for (const table of tables) {
        written[table.table] = 0;
        for await (const row of rowsOf(loose, table)) {
          line({ table: table.table, row });
          written[table.table]!++;
        }
      }
      const trailer: Trailer = { end: FORMAT, tables: written, sha256: checksum.hex() };
      write(JSON.stringify(trailer));
      return written;
    });
}
