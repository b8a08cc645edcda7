// Issue 42, claims: the standard claims of OIDC Core §5.1 a user holds beyond their columns
// (middle_name, nickname, profile, picture, website, gender, birthdate, zoneinfo, locale, address,
// phone_number, phone_number_verified) as one JSON object, null when they hold none; and the claims
// an authorization request's claims parameter (§5.5) asked for, kept with the grant its code was
// redeemed for so that userinfo and refreshed ID tokens honour it, null when there was none.
// Frozen: no current types.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table users add column claims text`.execute(db);
  await sql`alter table grants add column claims_request text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table grants drop column claims_request`.execute(db);
  await sql`alter table users drop column claims`.execute(db);
}
