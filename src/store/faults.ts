// A fault of the database rather than of the request: PostgreSQL restarting, failing over or out of
// reach, a SQLite file on a full disk or a read-only filesystem. The store turns such errors into
// DatabaseUnavailable (./postgres/connection.ts, ./sqlite/writer.ts), so that the one error mapper
// answers 503 with Retry-After and the client tries again, while anything else stays a 500.

export class DatabaseUnavailable extends Error {
  override name = 'DatabaseUnavailable';
  constructor(cause: unknown) {
    super(`the database is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
  /** The fault's own error: what a worker thread sends across in place of this one. */
  get fault(): Error {
    return this.cause instanceof Error ? this.cause : new Error(String(this.cause));
  }
}

/** Counts the faults seen, for the metrics (tessera_database_errors_total). */
export class FaultCounter {
  count = 0;
  /** Returns the error to throw: DatabaseUnavailable when `isFault` says the database is at fault. */
  translate(error: unknown, isFault: (error: unknown) => boolean): unknown {
    if (error instanceof DatabaseUnavailable) return error;
    if (!isFault(error)) return error;
    this.count++;
    return new DatabaseUnavailable(error);
  }
}
