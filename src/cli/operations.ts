// The command line's own error: a command used wrongly (exit 2). The operations the commands run are
// in src/admin (users.ts, clients.ts, …), shared with the admin API.
export class UsageError extends Error {
  override name = 'UsageError';
}
