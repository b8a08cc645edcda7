// Issue 42, OpenID Connect Front-Channel Logout 1.0. `clients.frontchannel_logout_uri`: the page the
// end of a session loads in a hidden iframe (§2, null: none), and
// `frontchannel_logout_session_required` (0/1): whether it is given `iss` and `sid` (§2). Frozen: no
// current types.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table clients add column frontchannel_logout_uri text`.execute(db);
  await sql`alter table clients add column frontchannel_logout_session_required integer not null default 0`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table clients drop column frontchannel_logout_session_required`.execute(db);
  await sql`alter table clients drop column frontchannel_logout_uri`.execute(db);
}
