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

/** What a lookup found, or a NotFoundError saying `missing` (`no client abc`) when it found nothing. */
export function found<T>(thing: T | null | undefined, missing: string): T {
  if (thing === null || thing === undefined) throw new NotFoundError(missing);
  return thing;
}
