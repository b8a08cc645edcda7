// How the store writes columns into SQL by hand: column lists checked against the row types (./tables.ts),
// the prefixes that keep a join's columns apart, each database's parameter style, and the
// space-separated lists (scopes) some columns hold.

// Column lists, written as one string and checked against the row types both ways: a column added to
// a row type must be added here.
type Split<S extends string> = S extends `${infer Head} ${infer Tail}` ? [Head, ...Split<Tail>] : [S];
type Exact<Row, S extends string> = [Exclude<keyof Row, Split<S>[number]>, Exclude<Split<S>[number], keyof Row>];
export function columns<Row>() {
  return <const S extends string>(list: S & (Exact<Row, S> extends [never, never] ? unknown : never)) =>
    list.split(' ') as Split<S>;
}

/** How a database writes the n-th parameter of a statement: `?1` on SQLite, `$1` on PostgreSQL. */
export type Placeholder = (n: number) => string;

/** `t.c as t_c, …`: a joined table's columns under its prefix. */
export const prefixed = (table: string, list: readonly string[]) =>
  list.map((c) => `${table}.${c} as ${table}_${c}`).join(', ');

/** A space-separated list (a scope column) as its items. */
export function splitScope(scope: string | null | undefined): string[] {
  return scope ? scope.split(' ').filter((s) => s !== '') : [];
}

/** A row's columns as `prefixed` names them in a join: `t_c`. */
export type Prefixed<Row, P extends string> = { [K in keyof Row & string as `${P}_${K}`]: Row[K] };

/** A column's name in the camelCase objects the store answers with: `created_at` is `createdAt`. */
type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;
export type Camelized<Row> = { [K in keyof Row & string as Camel<K>]: Row[K] };

/**
 * Both ways between a row and its object, for a row whose columns the object only renames (snake_case
 * to camelCase, values as they are): `list` is its columns (checked by `columns<Row>()`).
 */
export function renamed<Row>(list: ReadonlyArray<keyof Row & string>) {
  const names = list.map((column) => [column, column.replace(/_(.)/g, (_, c: string) => c.toUpperCase())] as const);
  return {
    to: (row: Row): Camelized<Row> => Object.fromEntries(names.map(([c, k]) => [k, row[c]])) as Camelized<Row>,
    from: (object: Camelized<Row>): Row => {
      const named = object as Record<string, unknown>;
      return Object.fromEntries(names.map(([c, k]) => [c, named[k]])) as Row;
    },
  };
}
