// A row as the SELECT of an INSERT … SELECT: the statement inserts the row only when the WHERE the
// caller adds to `values` finds it should, decided inside the statement (no read before the write).
import type { Kysely } from 'kysely';
import type { Database } from './tables.ts';

/** The row's columns, and its values as a SELECT without FROM, for `insertInto(…).columns(columns).expression(…)`. */
export function rowValues<Row extends object>(db: Kysely<Database>, row: Row) {
  const columns = Object.keys(row) as Array<keyof Row & string>;
  const values = db.selectNoFrom((eb) => columns.map((column) => eb.val(row[column]).as(column)));
  return { columns, values };
}
