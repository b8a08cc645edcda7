// Rows to domain objects and back, and the reads of every request written out by hand, which both
// databases share (only their parameters are written differently: `?1` on SQLite, `$1` on PostgreSQL).
// Reads that go together are one statement (a join): on PostgreSQL every statement saved is a round
// trip; on SQLite, prepared once, they cost a third of statements built through Kysely (bench/RESULTS.md,
// item 11).
import type { AccessTokenState, Client, Resource, SessionAndUser, TokenFamily, User } from './store.ts';
import type { ClientRow, GrantRow, ResourceRow, SessionRow, UserRow } from './types.ts';

// Column lists, written as one string and checked against the row types both ways: a column added to
// a row type must be added here.
type Split<S extends string> = S extends `${infer Head} ${infer Tail}` ? [Head, ...Split<Tail>] : [S];
type Exact<Row, S extends string> = [Exclude<keyof Row, Split<S>[number]>, Exclude<Split<S>[number], keyof Row>];
function columns<Row>() {
  return <const S extends string>(list: S & (Exact<Row, S> extends [never, never] ? unknown : never)) =>
    list.split(' ') as Split<S>;
}
export const GRANT_COLUMNS = columns<GrantRow>()(
  // eslint-disable-next-line max-len -- one string literal, so that its type lists the columns
  'id user_id client_id scope auth_time created_at revoked_at refresh_generation refresh_expires_at refresh_issued_at resource',
);
const SESSION_COLUMNS = columns<SessionRow>()('id user_id auth_time created_at expires_at');
export const USER_COLUMNS = columns<UserRow>()(
  'id username email email_verified name given_name family_name password_hash disabled created_at updated_at',
);

/** How a database writes the n-th parameter of a statement. */
export type Placeholder = (n: number) => string;

export const prefixed = (table: string, list: readonly string[]) =>
  list.map((c) => `${table}.${c} as ${table}_${c}`).join(', ');

/** The reads every request makes, in a database's parameter style. */
export function sharedStatements(p: Placeholder) {
  return {
    user: `select * from users where id = ${p(1)}`,
    consent: `select scope from consents where user_id = ${p(1)} and client_id = ${p(2)}`,
    grant: `select * from grants where id = ${p(1)}`,
    /** A refresh: the grant and its user. Parameter: the grant's id. */
    tokenFamily: `select ${prefixed('g', GRANT_COLUMNS)}, ${prefixed('u', USER_COLUMNS)}
      from grants g left join users u on u.id = g.user_id where g.id = ${p(1)}`,
    /**
     * An access token's user, grant and own revocation. Parameters: `sub`, `grant_id`, `jti`. Always
     * one row (from a one-row source), so that a missing user or grant still reads as absent.
     */
    accessTokenState: `select ${prefixed('u', USER_COLUMNS)}, g.id as g_id, g.revoked_at as g_revoked_at,
        (select count(*) from revoked_access_tokens r where r.jti = ${p(3)}) as revoked
      from (select 1 as one) x left join users u on u.id = ${p(1)} left join grants g on g.id = ${p(2)}`,
    /** A page: the session and its user. Parameters: the session id, now. */
    sessionAndUser: `select ${prefixed('s', SESSION_COLUMNS)}, ${prefixed('u', USER_COLUMNS)}
      from sessions s left join users u on u.id = s.user_id where s.id = ${p(1)} and s.expires_at > ${p(2)}`,
    /** An authorization request: the same and the scopes consented to for the client (third parameter). */
    sessionUserAndConsent: `select ${prefixed('s', SESSION_COLUMNS)}, ${prefixed('u', USER_COLUMNS)}, c.scope as c_scope
      from sessions s left join users u on u.id = s.user_id
      left join consents c on c.user_id = s.user_id and c.client_id = ${p(3)}
      where s.id = ${p(1)} and s.expires_at > ${p(2)}`,
  };
}

type Joined = Record<string, unknown>;

function part<T>(row: Joined, prefix: string, list: readonly string[]): T {
  const out: Record<string, unknown> = {};
  for (const column of list) out[column] = row[`${prefix}${column}`];
  return out as T;
}

/** The user joined in under the prefix u_, or undefined when there was none. */
function userOf(row: Joined | undefined): User | undefined {
  return row?.u_id == null ? undefined : toUser(part<UserRow>(row, 'u_', USER_COLUMNS));
}

export function toTokenFamily(row: Joined | undefined): TokenFamily | undefined {
  return row && { grant: part<GrantRow>(row, 'g_', GRANT_COLUMNS), user: userOf(row) };
}

export function toAccessTokenState(row: Joined | undefined): AccessTokenState {
  const revokedAt = row?.g_revoked_at == null ? null : Number(row.g_revoked_at);
  const grant = row?.g_id == null ? undefined : { id: row.g_id as string, revoked_at: revokedAt };
  return { user: userOf(row), grant, revoked: Number(row?.revoked ?? 0) > 0 };
}

export function toSessionAndUser(row: Joined | undefined): SessionAndUser | undefined {
  if (!row) return undefined;
  const consented = 'c_scope' in row ? { consentedScopes: splitScope(row.c_scope as string | null) } : {};
  return { session: part<SessionRow>(row, 's_', SESSION_COLUMNS), user: userOf(row), ...consented };
}

export function splitScope(scope: string | null | undefined): string[] {
  return scope ? scope.split(' ').filter((s) => s !== '') : [];
}

export function toClient(row: ClientRow): Client {
  return {
    clientId: row.client_id,
    secretHash: row.secret_hash,
    name: row.name,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    postLogoutRedirectUris: JSON.parse(row.post_logout_redirect_uris) as string[],
    scopes: splitScope(row.scope),
    grantTypes: JSON.parse(row.grant_types) as string[],
    allowedOrigins: JSON.parse(row.allowed_origins) as string[],
    tokenEndpointAuthMethod: row.token_endpoint_auth_method,
    firstParty: row.first_party === 1,
    idTokenSignedResponseAlg: row.id_token_signed_response_alg,
    createdAt: row.created_at,
    registeredVia: row.registered_via === 'dynamic' ? 'dynamic' : 'operator',
    ownerId: row.owner_id,
    registrationTokenHash: row.registration_token_hash,
    metadata: JSON.parse(row.metadata) as Client['metadata'],
    previousSecret:
      row.previous_secret_hash === null
        ? null
        : { hash: row.previous_secret_hash, expiresAt: Number(row.previous_secret_expires_at) },
  };
}

export function fromClient(client: Client): ClientRow {
  return {
    client_id: client.clientId,
    secret_hash: client.secretHash,
    name: client.name,
    redirect_uris: JSON.stringify(client.redirectUris),
    post_logout_redirect_uris: JSON.stringify(client.postLogoutRedirectUris),
    scope: client.scopes.join(' '),
    grant_types: JSON.stringify(client.grantTypes),
    allowed_origins: JSON.stringify(client.allowedOrigins),
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    first_party: client.firstParty ? 1 : 0,
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    created_at: client.createdAt,
    registered_via: client.registeredVia,
    owner_id: client.ownerId,
    registration_token_hash: client.registrationTokenHash,
    metadata: JSON.stringify(client.metadata),
    previous_secret_hash: client.previousSecret?.hash ?? null,
    previous_secret_expires_at: client.previousSecret?.expiresAt ?? null,
  };
}

export function toResource(row: ResourceRow): Resource {
  return { uri: row.uri, name: row.name, scopes: splitScope(row.scope), createdAt: Number(row.created_at) };
}

export function fromResource(resource: Resource): ResourceRow {
  return { uri: resource.uri, name: resource.name, scope: resource.scopes.join(' '), created_at: resource.createdAt };
}

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    emailVerified: row.email_verified === 1,
    name: row.name,
    givenName: row.given_name,
    familyName: row.family_name,
    passwordHash: row.password_hash,
    disabled: row.disabled === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function fromUser(user: User): UserRow {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    email_verified: user.emailVerified ? 1 : 0,
    name: user.name,
    given_name: user.givenName,
    family_name: user.familyName,
    password_hash: user.passwordHash,
    disabled: user.disabled ? 1 : 0,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
  };
}
