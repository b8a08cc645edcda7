// Kysely's PostgresDialect over a pg pool whose int8 columns (epoch seconds) parse as numbers.
import { PostgresDialect } from 'kysely';
import pg from 'pg';

const INT8_OID = 20;

export function postgresPool(connectionString: string): pg.Pool {
  return new pg.Pool({
    connectionString,
    max: 10,
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === INT8_OID
          ? (value: string) => Number(value)
          : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
}

export function postgresDialect(pool: pg.Pool, namedStatements = true): PostgresDialect {
  if (!namedStatements) return new PostgresDialect({ pool });
  return new PostgresDialect({
    pool: { connect: async () => prepareStatements(await pool.connect()), end: () => pool.end() },
  });
}

// Each SQL text gets a name, so PostgreSQL parses and plans it once per connection and then only
// binds and executes it (pg's named statements). Kysely sends the same few texts again and again;
// the first MAX_NAMED distinct ones are named, anything beyond runs unnamed as before.
//
// A statement prepared before a schema change can fail with "cached plan must not change result
// type" (another instance migrated the database, e.g. `select *` from a table that gained a column):
// that connection then stops naming statements and the query is sent once more, unnamed.
const MAX_NAMED = 500;
const names = new Map<string, string>();
const clients = new WeakMap<pg.PoolClient, { named: boolean }>();

function nameFor(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED) {
    name = `tessera_${names.size}`;
    names.set(text, name);
  }
  return name;
}

export function prepareStatements(client: pg.PoolClient): pg.PoolClient {
  if (clients.has(client)) return client;
  const state = { named: true };
  clients.set(client, state);
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  client.query = ((first: unknown, ...rest: unknown[]) => {
    const name =
      state.named && typeof first === 'string' && Array.isArray(rest[0]) && rest.length === 1
        ? nameFor(first)
        : undefined;
    if (!name) return query(first, ...rest);
    return query({ name, text: first, values: rest[0] }).catch((error: unknown) => {
      const { code, message } = error as { code?: string; message?: string };
      if (code !== '0A000' || !message?.includes('cached plan')) throw error;
      state.named = false;
      return query(first, rest[0]);
    });
  }) as typeof client.query;
  return client;
}
