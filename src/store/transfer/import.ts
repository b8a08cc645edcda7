// `tessera import`: a file of `tessera export` (./format.ts) into an empty database, in one
// transaction: a file cut short, altered, of another format version, from a newer Tessera, naming a
// table or field this database does not have, holding an encrypted value this TESSERA_SECRET cannot
// open, or meant for a database that is not empty, is refused with the reason and changes nothing.
import type { Kysely, Transaction } from 'kysely';
import { type EncryptedColumn, ENCRYPTED_COLUMNS } from '../encrypted.ts';
import type { Database } from '../tables.ts';
import { Checksum, FORMAT, type Header, ImportRefused, type Trailer, VERSION } from './format.ts';
import { EXPORTED_TABLES } from './tables.ts';

export interface ImportOptions {
  /** The migrations this Tessera knows (the target database has them all applied). */
  migrations: readonly string[];
  /** Whether an encrypted value opens under this environment's TESSERA_SECRET (or a previous one). */
  opens(column: EncryptedColumn, value: string): boolean;
}

interface Column {
  kind: 'integer' | 'number' | 'text';
  nullable: boolean;
  hasDefault: boolean;
}

/** Rows inserted per statement. */
const BATCH = 200;

type Loose = Transaction<Record<string, Record<string, unknown>>>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function parseLine(line: string, number: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new ImportRefused(`line ${number} is not JSON: not a Tessera export, or a damaged one`);
  }
  if (!isObject(value)) throw new ImportRefused(`line ${number} is not a JSON object`);
  return value;
}

function checkHeader(value: Record<string, unknown>, options: ImportOptions): Header {
  if (value.format !== FORMAT) throw new ImportRefused('not a Tessera export: the first line is not its header');
  if (value.version !== VERSION)
    throw new ImportRefused(
      `the file is in export format version ${String(value.version)}; this Tessera reads ${VERSION}`,
    );
  const { migrations, tables } = value;
  if (!Array.isArray(migrations) || !migrations.every((m) => typeof m === 'string') || !isObject(tables))
    throw new ImportRefused('the header lacks its migrations or tables');
  const newer = migrations.filter((m) => !options.migrations.includes(m));
  if (newer.length > 0)
    throw new ImportRefused(
      `the file comes from a newer Tessera (migration ${newer.join(', ')} unknown here): import it with that version`,
    );
  for (const [table, count] of Object.entries(tables)) {
    if (!EXPORTED_TABLES.some((t) => t.table === table))
      throw new ImportRefused(`the header names an unknown table "${table}"`);
    if (!Number.isSafeInteger(count) || (count as number) < 0)
      throw new ImportRefused(`the header's count of ${table} is not a count`);
  }
  return value as unknown as Header;
}

/** The target's columns of each exported table, as the database describes them. */
async function columnsOf(db: Kysely<Database>): Promise<Map<string, Map<string, Column>>> {
  const tables = new Map<string, Map<string, Column>>();
  for (const table of await db.introspection.getTables()) {
    if (!EXPORTED_TABLES.some((t) => t.table === table.name)) continue;
    const columns = new Map<string, Column>();
    for (const c of table.columns) {
      const kind = /int/i.test(c.dataType)
        ? 'integer'
        : /real|double|float|numeric/i.test(c.dataType)
          ? 'number'
          : 'text';
      columns.set(c.name, { kind, nullable: c.isNullable, hasDefault: c.hasDefaultValue });
    }
    tables.set(table.name, columns);
  }
  return tables;
}

/** Whether a value that is neither undefined nor null fits the column. */
function fits(column: Column, value: unknown): boolean {
  if (column.kind === 'integer') return Number.isSafeInteger(value);
  if (column.kind === 'number') return typeof value === 'number' && Number.isFinite(value);
  return typeof value === 'string';
}

/** What is wrong with a row for its table, or undefined. */
function rowProblem(row: Record<string, unknown>, columns: Map<string, Column>, key: readonly string[]) {
  for (const field of Object.keys(row)) if (!columns.has(field)) return `has no field "${field}"`;
  for (const [name, column] of columns) {
    const value = row[name];
    const required = key.includes(name) || !column.nullable;
    if (value === undefined && (key.includes(name) || (!column.nullable && !column.hasDefault)))
      return `lacks the field "${name}"`;
    if (value === null && required) return `has null for "${name}"`;
    if (value !== undefined && value !== null && !fits(column, value))
      return `has a ${typeof value} for "${name}", which holds ${column.kind === 'text' ? 'text' : 'numbers'}`;
  }
  return undefined;
}

class Inserts {
  readonly #trx: Loose;
  #table = '';
  #fields = '';
  #rows: Array<Record<string, unknown>> = [];
  #line = 0;

  constructor(trx: Loose) {
    this.#trx = trx;
  }

  /** Rows of one table with the same fields go in one statement. */
  async add(table: string, row: Record<string, unknown>, line: number): Promise<void> {
    const fields = Object.keys(row).sort().join(' ');
    if (table !== this.#table || fields !== this.#fields || this.#rows.length >= BATCH) await this.flush();
    this.#table = table;
    this.#fields = fields;
    this.#rows.push(row);
    this.#line = line;
  }

  async flush(): Promise<void> {
    if (this.#rows.length === 0) return;
    try {
      await this.#trx.insertInto(this.#table).values(this.#rows).execute();
    } catch (err) {
      throw new ImportRefused(`${this.#table}, rows up to line ${this.#line}: ${(err as Error).message}`);
    }
    this.#rows = [];
  }
}

/** Imports the lines of an export; the rows imported per table. Throws ImportRefused having changed nothing. */
export async function importDatabase(
  db: Kysely<Database>,
  lines: AsyncIterable<string>,
  options: ImportOptions,
): Promise<Record<string, number>> {
  const iterator = lines[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done || first.value === '') throw new ImportRefused('the input is empty: no export to import');
  const header = checkHeader(parseLine(first.value, 1), options);
  const checksum = new Checksum();
  checksum.add(first.value);
  const columns = await columnsOf(db);
  const encrypted = (table: string) => ENCRYPTED_COLUMNS.filter((c) => c.table === table);
  return db.transaction().execute(async (transaction) => {
    const trx = transaction as unknown as Loose;
    const occupied: string[] = [];
    for (const table of Object.keys(header.tables)) {
      const { n } = await trx
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      if (Number(n) > 0) occupied.push(`${table}: ${Number(n)}`);
    }
    if (occupied.length > 0)
      throw new ImportRefused(
        `the database is not empty (${occupied.join(', ')}): import into a new database, before Tessera ` +
          'has started on it (docs/backup.md)',
      );
    const seen: Record<string, number> = Object.fromEntries(Object.keys(header.tables).map((t) => [t, 0]));
    const inserts = new Inserts(trx);
    let trailer: Trailer | undefined;
    let number = 1;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      number++;
      const line = next.value;
      if (trailer) throw new ImportRefused(`line ${number} follows the trailer: the file was joined to another`);
      const value = parseLine(line, number);
      if (value.end === FORMAT) {
        trailer = value as unknown as Trailer;
        continue;
      }
      checksum.add(line);
      const { table, row } = value;
      if (typeof table !== 'string' || !isObject(row)) throw new ImportRefused(`line ${number} is not a row`);
      const entry = EXPORTED_TABLES.find((t) => t.table === table);
      if (!entry) throw new ImportRefused(`line ${number}: unknown table "${table}"`);
      if (!(table in seen))
        throw new ImportRefused(`line ${number}: a row of ${table}, which the header does not name`);
      const problem = rowProblem(row, columns.get(table)!, entry.key);
      if (problem) throw new ImportRefused(`line ${number}: the ${table} row ${problem}`);
      for (const column of encrypted(table)) {
        const cipher = row[column.column];
        if (typeof cipher === 'string' && !options.opens(column, cipher))
          throw new ImportRefused(
            `line ${number}: ${table}.${column.column} of ${String(row[column.key])} opens under neither ` +
              'TESSERA_SECRET nor TESSERA_SECRET_PREVIOUS: import with the secret the deployment it came from uses',
          );
      }
      seen[table]!++;
      await inserts.add(table, row, number);
    }
    await inserts.flush();
    if (!trailer)
      throw new ImportRefused('the file ends without its trailer line: it is incomplete (was the export cut short?)');
    if (trailer.sha256 !== checksum.hex())
      throw new ImportRefused("the file's checksum does not match its contents: it was altered or damaged");
    const listed = (tables: object | undefined) =>
      Object.keys(tables ?? {})
        .sort()
        .join(' ');
    if (listed(trailer.tables) !== listed(header.tables))
      throw new ImportRefused("the trailer's tables are not the header's: the file was altered or damaged");
    for (const [table, count] of Object.entries(header.tables)) {
      if (seen[table] !== count || trailer.tables?.[table] !== count)
        throw new ImportRefused(
          `${table}: the header says ${count} rows, the trailer ${String(trailer.tables?.[table])}, ` +
            `the file holds ${seen[table]}`,
        );
    }
    return seen;
  });
}
