// Which errors of pg mean that PostgreSQL, not the request, is at fault: the connection refused,
// reset or timed out, the server shutting down or starting up, out of connections, disk or memory,
// or a failover that left us on a read-only standby. Anything else (a constraint, a bad statement)
// is the request's or the code's, and stays an error of its own.

// SQLSTATE classes and codes (PostgreSQL, Appendix A).
const FAULT_CLASSES = ['08', '53', '57'];
const FAULT_CODES = new Set(['25006', '58030']); // read_only_sql_transaction, io_error
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const MESSAGES = [
  'Connection terminated', // also "… unexpectedly" and "… due to connection timeout"
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
];

export function isPostgresFault(error: unknown): boolean {
  // Every address of a host name refused (localhost: ::1 and 127.0.0.1).
  if (error instanceof AggregateError) return error.errors.some(isPostgresFault);
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (code.length === 5 && (FAULT_CLASSES.includes(code.slice(0, 2)) || FAULT_CODES.has(code))) {
      return code !== '57014'; // query_canceled: a statement timeout, the statement's fault
    }
    if (NETWORK_CODES.has(code)) return true;
  }
  return MESSAGES.some((message) => error.message.startsWith(message));
}
