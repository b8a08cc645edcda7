// Kysely's PostgresDialect over a pg pool whose int8 columns (epoch seconds) parse as numbers, and
// whose faults (a restart, a failover, a server out of reach) become DatabaseUnavailable, never an
// exit: the pool opens new connections on the next requests once the server is back.
import { PostgresDialect } from 'kysely';
import pg from 'pg';
import { FaultCounter } from '../faults.ts';
import { isPostgresFault } from './faults.ts';

const INT8_OID = 20;

export function postgresPool(
  connectionString: string,
  faults: FaultCounter,
  max = 10,
  namedStatements = true,
): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    // Unreachable (a dropped network, not a refused connection): a request fails after 5 s, not never.
    connectionTimeoutMillis: 5_000,
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === INT8_OID
          ? (value: string) => Number(value)
          : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // A connection the server ends ("terminating connection due to administrator command") emits
  // 'error', idle in the pool or checked out between two queries; unheard, that event ends the
  // process. The pool drops such a connection; the query that was running on it fails on its own.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => void faults.count++);
    // Each statement is named (below) so that a connection plans it once; but PostgreSQL's default
    // (plan_cache_mode auto) plans it again on every execution whenever a plan made for the values
    // at hand looks cheaper, which for the batched refresh and redemption (arrays of values) is
    // always: about half a millisecond of the server's CPU per token request. Every statement of
    // Tessera's looks rows up by key, where the generic plan is the right one. The first query on
    // the connection, queued before any other; not without named statements (a pooler such as
    // PgBouncer shares the server's sessions, which a SET would change for others too).
    if (namedStatements) client.query('set plan_cache_mode = force_generic_plan').catch(() => void faults.count++);
  });
  return pool;
}

export function postgresDialect(pool: pg.Pool, faults: FaultCounter, namedStatements = true): PostgresDialect {
  return new PostgresDialect({
    pool: {
      connect: async () => {
        let client: pg.PoolClient;
        try {
          client = await pool.connect();
        } catch (error) {
          throw faults.translate(error, isPostgresFault);
        }
        return prepareStatements(client, faults, namedStatements);
      },
      end: () => pool.end(),
    },
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

/** Names the client's statements (unless `namedStatements` is false) and turns its faults into DatabaseUnavailable. */
export function prepareStatements(
  client: pg.PoolClient,
  faults = new FaultCounter(),
  namedStatements = true,
): pg.PoolClient {
  if (clients.has(client)) return client;
  const state = { named: namedStatements };
  clients.set(client, state);
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  const send = (first: unknown, rest: unknown[]) => {
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
  };
  client.query = ((first: unknown, ...rest: unknown[]) => {
    const result = send(first, rest);
    // A submittable (a cursor) is returned as it is; a query's promise, with its faults translated.
    if (!(result instanceof Promise)) return result;
    return result.catch((error: unknown) => {
      throw faults.translate(error, isPostgresFault);
    });
  }) as typeof client.query;
  return client;
}
