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
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
}

export function postgresDialect(pool: pg.Pool): PostgresDialect {
  return new PostgresDialect({ pool });
}
