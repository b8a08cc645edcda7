// What the operator's operations (./users.ts, ./grants.ts) throw: a value refused or a conflict
// (AdminError), or nothing by that name (NotFoundError). The CLI says the message and exits 2 or 1;
// an admin API would answer 400 or 409, and 404.
export class AdminError extends Error {
  override name = 'AdminError';
}

export class NotFoundError extends AdminError {
  override name = 'NotFoundError';
}
