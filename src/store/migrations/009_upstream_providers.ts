// Issue 36, upstream providers: the OpenID Connect providers and GitHub a person may sign in with
// (src/upstream), their client secrets encrypted under TESSERA_SECRET, and the links from a person
// there, (provider, subject), to a user here. A user links one account per provider. Users are
// found by email (case-insensitively) when a first sign-in asks whether an account exists already.
// Frozen: no current types.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table upstream_providers (id text primary key, type text not null, name text not null,
    issuer text, client_id text not null, client_secret_enc text not null, scope text not null,
    trust_email integer not null, link_only integer not null, trust_upstream_mfa integer not null,
    allow_private_network integer not null, login_hint_domains text not null, github_url text,
    github_api_url text, created_at bigint not null, updated_at bigint not null)`.execute(db);
  await sql`create table upstream_links (provider_id text not null, subject text not null,
    user_id text not null, email text, created_at bigint not null, last_used_at bigint,
    constraint upstream_links_pk primary key (provider_id, subject))`.execute(db);
  await sql`create unique index upstream_links_user on upstream_links (user_id, provider_id)`.execute(db);
  await sql`create index users_email_lower on users (lower(email))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index users_email_lower`.execute(db);
  await db.schema.dropTable('upstream_links').execute();
  await db.schema.dropTable('upstream_providers').execute();
}
