// The schema, portable to SQLite and PostgreSQL: bigint epoch seconds, integer 0/1 flags, text.
// Frozen once released: a later change is a migration of its own.
import { type Kysely, SqliteAdapter, sql } from 'kysely';

// A grant is written by every code exchange and refresh. On SQLite it is a WITHOUT ROWID table: the
// row lives in its primary key's B-tree rather than in a rowid table plus an index on the key, so a
// commit writes fewer pages (bench/RESULTS.md, item 16). Only revoked grants are indexed by their
// revocation time (housekeeping's `revoked_at < …` implies it), so a new grant adds no entry there.
const schema = (withoutRowid: boolean) => [
  `create table clients (client_id text primary key, secret_hash text, name text not null,
    redirect_uris text not null, post_logout_redirect_uris text not null, scope text not null,
    grant_types text not null, token_endpoint_auth_method text not null, first_party integer not null,
    id_token_signed_response_alg text, allowed_origins text not null, created_at bigint not null,
    registered_via text not null, owner_id text, registration_token_hash text, metadata text not null,
    previous_secret_hash text, previous_secret_expires_at bigint)`,
  // The apps a user registered (RFC 7591), listed on their account page.
  'create index clients_owner_id on clients (owner_id) where owner_id is not null',
  `create table users (id text primary key, username text not null unique, email text not null,
    email_verified integer not null, name text, given_name text, family_name text, password_hash text,
    disabled integer not null, created_at bigint not null, updated_at bigint not null)`,
  `create table sessions (id text primary key, user_id text not null, auth_time bigint not null,
    created_at bigint not null, expires_at bigint not null)`,
  'create index sessions_expires_at on sessions (expires_at)',
  `create table consents (user_id text not null, client_id text not null, scope text not null,
    updated_at bigint not null, constraint consents_pk primary key (user_id, client_id))`,
  `create table grants (id text primary key, user_id text not null, client_id text not null, scope text not null,
    auth_time bigint not null, created_at bigint not null, revoked_at bigint, refresh_generation integer not null,
    refresh_expires_at bigint not null, refresh_issued_at bigint not null,
    resource text)${withoutRowid ? ' without rowid' : ''}`,
  'create index grants_user_id on grants (user_id)',
  'create index grants_revoked_at on grants (revoked_at) where revoked_at is not null',
  // APIs registered by the operator (RFC 8707 resource indicators) and the scopes each accepts.
  `create table resources (uri text primary key, name text not null, scope text not null,
    created_at bigint not null)`,
  'create table revoked_access_tokens (jti text primary key, expires_at bigint not null)',
  'create index revoked_access_tokens_expires_at on revoked_access_tokens (expires_at)',
  // Failed sign-ins and client authentications per key (src/oauth/throttle.ts); `subject` is the
  // username or client a key counts for, so that `tessera users unlock` finds every key of a user.
  `create table throttles (key text primary key, subject text not null, failures integer not null,
    last_failure_at bigint not null)`,
  'create index throttles_subject on throttles (subject)',
  'create index throttles_last_failure_at on throttles (last_failure_at)',
  // The audit trail (src/events): read by user, by client, or by time; kept for TESSERA_EVENT_RETENTION.
  `create table events (id text primary key, at bigint not null, type text not null, user_id text,
    client_id text, ip text, user_agent text, data text)`,
  'create index events_at on events (at)',
  'create index events_user_id on events (user_id, at)',
  'create index events_client_id on events (client_id, at)',
  // Webhooks (src/events/webhooks): subscriptions, the outbox of deliveries (one row per event and
  // subscription, written with the event), and the log of each delivery's attempts.
  `create table webhooks (id text primary key, url text not null, events text not null, owner_id text,
    secret_enc text not null, previous_secret_enc text, previous_until bigint, created_at bigint not null)`,
  'create index webhooks_owner_id on webhooks (owner_id)',
  `create table webhook_deliveries (id text primary key, webhook_id text not null, event_id text not null,
    event_type text not null, payload text not null, status text not null, attempts integer not null,
    retry_base integer not null default 0,
    next_attempt_at bigint not null, locked_until bigint, created_at bigint not null, last_status integer,
    last_error text, finished_at bigint)`,
  "create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending'",
  'create index webhook_deliveries_webhook on webhook_deliveries (webhook_id, created_at)',
  'create index webhook_deliveries_created_at on webhook_deliveries (created_at)',
  `create table webhook_attempts (delivery_id text not null, attempt integer not null, at bigint not null,
    status integer, duration_ms integer not null, error text,
    constraint webhook_attempts_pk primary key (delivery_id, attempt))`,
  // A key's state follows from its times (src/tokens/key-timeline.ts). `successor_of` names the key it
  // replaces (`initial:<alg>` for the first): unique, so that of two instances rotating at once, or
  // starting on an empty database at once, one inserts the key and the other nothing.
  `create table signing_keys (kid text primary key, alg text not null, public_jwk text not null,
    private_jwk_enc text not null, created_at bigint not null, activates_at bigint not null,
    successor_of text not null unique)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of schema(db.getExecutor().adapter instanceof SqliteAdapter)) {
    await sql.raw(statement).execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'webhook_attempts',
    'webhook_deliveries',
    'webhooks',
    'throttles',
    'events',
    'signing_keys',
    'revoked_access_tokens',
    'resources',
    'grants',
    'consents',
    'sessions',
    'users',
    'clients',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
