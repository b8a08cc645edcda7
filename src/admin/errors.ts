// What the operator's operations (./users.ts, ./grants.ts, ./clients.ts) throw: a value refused
// (AdminError), a conflict with what exists (ConflictError), or nothing by that name (NotFoundError).
// The CLI says the message and exits 2 or 1; the admin API (src/http/admin-api) answers 400, 409 and 404.
export class AdminError extends Error {
  override name = 'AdminError';
}

export class NotFoundError extends AdminError {
  override name = 'NotFoundError';
}

export class ConflictError extends AdminError {
  override name = 'ConflictError';
}
