// The JSON Schemas of the admin API's objects, shared by the routes (by $ref) and named in the
// OpenAPI document's components. Times are RFC 3339 strings in UTC.
const time = { type: 'string', description: 'RFC 3339, UTC' } as const;
const nullableTime = { type: ['string', 'null'], description: 'RFC 3339, UTC' } as const;
const strings = { type: 'array', items: { type: 'string' } } as const;

export const USER_SCHEMA = {
  $id: 'User',
  type: 'object',
  required: ['id', 'username', 'email', 'email_verified', 'name', 'disabled', 'locked', 'roles', 'has_password'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    username: { type: 'string' },
    email: { type: 'string' },
    email_verified: { type: 'boolean' },
    name: { type: ['string', 'null'] },
    given_name: { type: ['string', 'null'] },
    family_name: { type: ['string', 'null'] },
    disabled: { type: 'boolean', description: 'cannot sign in; its apps and tokens stop until enabled' },
    locked: { type: 'boolean', description: 'sign-ins are locked after too many failures (POST …/unlock ends it)' },
    roles: strings,
    has_password: { type: 'boolean' },
    created_at: time,
    updated_at: time,
  },
} as const;

export const GRANT_SCHEMA = {
  $id: 'Grant',
  type: 'object',
  required: ['id', 'client_id', 'scope', 'created_at'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    client_id: { type: 'string' },
    client_name: { type: ['string', 'null'] },
    scope: { type: 'string' },
    resource: { type: ['string', 'null'] },
    created_at: time,
    refresh_expires_at: nullableTime,
  },
} as const;

const nullableString = { type: ['string', 'null'] } as const;
const nullableSeconds = { type: ['integer', 'null'], description: "seconds; null: the server's setting" } as const;

export const CLIENT_SCHEMA = {
  $id: 'Client',
  type: 'object',
  required: ['client_id', 'client_name', 'scope', 'grant_types', 'token_endpoint_auth_method', 'admin'],
  additionalProperties: false,
  properties: {
    client_id: { type: 'string' },
    client_name: { type: 'string' },
    redirect_uris: strings,
    post_logout_redirect_uris: strings,
    scope: { type: 'string' },
    grant_types: strings,
    allowed_origins: strings,
    cors_origins: strings,
    token_endpoint_auth_method: { type: 'string' },
    jwks_uri: nullableString,
    jwks_kids: strings,
    first_party: { type: 'boolean' },
    id_token_signed_response_alg: nullableString,
    require_mfa: { type: 'boolean' },
    require_pushed_authorization_requests: { type: 'boolean' },
    dpop_bound_access_tokens: { type: 'boolean' },
    request_object_signing_alg: nullableString,
    admin: { type: 'boolean' },
    roles: { type: ['array', 'null'], items: { type: 'string' } },
    backchannel_logout_uri: nullableString,
    backchannel_logout_session_required: { type: 'boolean' },
    frontchannel_logout_uri: nullableString,
    frontchannel_logout_session_required: { type: 'boolean' },
    exchange_audiences: strings,
    access_token_ttl: nullableSeconds,
    refresh_token_ttl: nullableSeconds,
    id_token_ttl: nullableSeconds,
    created_at: time,
    redirect_uri_problems: strings,
    registered_via: { type: 'string' },
    owner_id: nullableString,
  },
} as const;

export const SHARED_SCHEMAS = [USER_SCHEMA, GRANT_SCHEMA, CLIENT_SCHEMA];

/** A page of `item`s and the cursor of the next page (null on the last). */
export function pageOf(item: string) {
  return {
    type: 'object',
    required: ['items', 'next_cursor'],
    additionalProperties: false,
    properties: { items: { type: 'array', items: { $ref: `${item}#` } }, next_cursor: { type: ['string', 'null'] } },
  } as const;
}

/** The problem details a route may answer with, by status (./problems.ts). */
export function problems(...statuses: number[]) {
  const descriptions: Record<number, string> = {
    400: 'the request is not valid',
    401: 'no access token, or not an active one',
    403: 'the access token lacks the admin scope',
    404: 'no such object',
    409: 'a conflict with an existing object',
    412: "If-Match names none of the object's current ETags",
    415: 'a media type the route does not take',
    502: "the upstream provider's discovery document could not be read",
    503: 'the database is unavailable',
  };
  return Object.fromEntries(
    [401, 403, 503, ...statuses].map((status) => [
      status,
      { description: descriptions[status], content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } } },
    ]),
  );
}

export const ETAG_HEADER = { ETag: { type: 'string', description: "the object's entity tag (If-Match)" } } as const;

export const IF_MATCH = {
  type: 'object',
  properties: { 'if-match': { type: 'string', description: 'an ETag of the object as last read; 412 if stale' } },
} as const;

/** An object with these properties and no others, every one required but those named `optional`. */
export function objectOf(properties: Record<string, unknown>, optional: string[] = []) {
  return {
    type: 'object',
    required: Object.keys(properties).filter((key) => !optional.includes(key)),
    additionalProperties: false,
    properties,
  } as const;
}

/** A list answer: `{ items: [...] }`, each item of the schema given. */
export function listOf(item: object) {
  return objectOf({ items: { type: 'array', items: item } });
}

/** The path parameters of a route naming one object by `name` (a string). */
export function paramsOf(name: string) {
  return { type: 'object', required: [name], properties: { [name]: { type: 'string' } } } as const;
}

/** A body or an answer in JSON, of the schema given. */
export function jsonContent(schema: object) {
  return { 'application/json': { schema } };
}

/** An answer that is one object, and its ETag (./etag.ts). */
export function objectAnswer(description: string, schema: object) {
  return { description, headers: ETAG_HEADER, content: jsonContent(schema) };
}

/** An answer without a body (204). */
export function noContent(description: string) {
  return { description, type: 'null' } as const;
}

/** A PATCH's body: a JSON merge patch (RFC 7396), taken as application/json too. */
export function mergePatch(schema: object) {
  return { content: { 'application/merge-patch+json': { schema }, ...jsonContent(schema) } };
}
