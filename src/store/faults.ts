// A fault of the database rather than of the request: PostgreSQL restarting, failing over or out of
// reach, a SQLite file on a full disk or a read-only filesystem. The store turns such errors into
// DatabaseUnavailable (./postgres/connection.ts, ./sqlite/writer.ts), so that the one error mapper
// answers 503 with Retry-After and the client tries again, while anything else stays a 500.

/** An error's message, or its code where it has none (an AggregateError of refused connections). */
function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  return cause.message || String((cause as { code?: unknown }).code ?? cause.name);
}

export class DatabaseUnavailable extends Error {
  override name = 'DatabaseUnavailable';
  constructor(cause: unknown) {
    super(`the database is unavailable: ${describe(cause)}`, { cause });
  }
  /** The fault's own error: what a worker thread sends across in place of this one. */
  get fault(): Error {
    const cause = this.cause instanceof Error ? this.cause : new Error(String(this.cause));
    return cause.message
      ? cause
      : Object.assign(new Error(describe(cause)), { code: (cause as { code?: unknown }).code });
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
