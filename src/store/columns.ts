// How the store writes columns into SQL by hand: column lists checked against the row types (./tables.ts),
// the prefixes that keep a join's columns apart, each database's parameter style, and the
// space-separated lists (scopes) some columns hold.

// Column lists, written as space-separated strings (one, or a few when a row has many columns) and
// checked against the row types both ways: a column added to a row type must be added here.
type Split<S extends string> = S extends `${infer Head} ${infer Tail}` ? [Head, ...Split<Tail>] : [S];
type Words<P extends readonly string[]> = P extends readonly [infer H extends string, ...infer T extends string[]]
  ? [...Split<H>, ...Words<T>]
  : [];
type Exact<Row, W extends readonly string[]> = [Exclude<keyof Row, W[number]>, Exclude<W[number], keyof Row>];
export function columns<Row>() {
  return <const P extends readonly string[]>(
    ...lists: P & (Exact<Row, Words<P>> extends [never, never] ? unknown : never)
  ) => lists.flatMap((list) => list.split(' ')) as Words<P>;
}

/** Some of a row's columns, each checked to be one of them: the part of a row that `renamed` maps. */
export function someColumns<Row>() {
  return <const P extends readonly string[]>(...lists: P & (Exact<Row, Words<P>>[1] extends never ? unknown : never)) =>
    lists.flatMap((list) => list.split(' ')) as Words<P>;
}

/** How a database writes the n-th parameter of a statement: `?1` on SQLite, `$1` on PostgreSQL. */
export type Placeholder = (n: number) => string;

/** `t.c as t_c, …`: a joined table's columns under its prefix. */
export const prefixed = (table: string, list: readonly string[]) =>
  list.map((c) => `${table}.${c} as ${table}_${c}`).join(', ');

/** What an update of a row sets: its columns but those the update keeps (its key, when it was made, …). */
export function columnsToSet<Row extends object, K extends keyof Row & string>(
  row: Row,
  kept: readonly K[],
): Omit<Row, K> {
  return Object.fromEntries(Object.entries(row).filter(([column]) => !kept.includes(column as K))) as Omit<Row, K>;
}

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
 * Both ways between a row's columns and the fields of its object that only rename them (snake_case to
 * camelCase, values as they are): `list` is the whole row (checked by `columns<Row>()`), or the columns
 * that need nothing more (`someColumns<Row>()`) beside the fields a mapper writes by hand (a flag, a list).
 */
export function renamed<const C extends string>(list: readonly C[]) {
  const names = list.map((column) => [column, column.replace(/_(.)/g, (_, c: string) => c.toUpperCase())] as const);
  return {
    to: <Row extends Record<C, unknown>>(row: Row): Camelized<Pick<Row, C>> =>
      Object.fromEntries(names.map(([c, k]) => [k, row[c]])) as Camelized<Pick<Row, C>>,
    from: <Obj extends Record<Camel<C>, unknown>>(object: Obj): { [K in C]: Obj[Camel<K>] } => {
      const named = object as Record<string, unknown>;
      return Object.fromEntries(names.map(([c, k]) => [c, named[k]])) as { [K in C]: Obj[Camel<K>] };
    },
  };
}
