// Issue 42, DPoP (RFC 9449). `grants.dpop_jkt`: the thumbprint of the DPoP key a public client's
// refresh tokens are bound to (§5: a refresh must be proven with the same key); null: not bound.
// `clients.require_dpop` (0/1, null for clients from before): every token request of the client must
// carry a proof (`--require-dpop`, registration's `dpop_bound_access_tokens`). Frozen: no current types.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table grants add column dpop_jkt text`.execute(db);
  await sql`alter table clients add column require_dpop integer`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table clients drop column require_dpop`.execute(db);
  await sql`alter table grants drop column dpop_jkt`.execute(db);
}
