// Which errors of SQLite mean that the file, not the request, is at fault: the disk is full, the file
// or its filesystem is read-only, an I/O error, the file cannot be opened, or another process held
// the lock beyond the busy timeout. Anything else (a constraint, a bad statement) stays its own error.

// Primary result codes (https://sqlite.org/rescode.html); node:sqlite gives the extended one as `errcode`.
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_NOMEM = 7;
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const FAULTS = new Set([
  SQLITE_BUSY,
  SQLITE_LOCKED,
  SQLITE_NOMEM,
  SQLITE_READONLY,
  SQLITE_IOERR,
  SQLITE_FULL,
  SQLITE_CANTOPEN,
]);

export function isSqliteFault(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  return typeof errcode === 'number' && FAULTS.has(errcode & 0xff);
}

/** The file was read-only, or could not be opened, when the connection opened it: a new one may fare better. */
export function isReadOnly(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  return typeof errcode === 'number' && ((errcode & 0xff) === SQLITE_READONLY || (errcode & 0xff) === SQLITE_CANTOPEN);
}
