// PostgreSQL's two hot writes, written out by hand as statements over arrays, one element per call, so
// that concurrent calls share one statement and one commit (./batches.ts). The reads every request
// makes are shared with SQLite (../grants.ts, ../sessions.ts, ../users.ts).
import { prefixed } from '../columns.ts';
import { GRANT_COLUMNS } from '../grant-rows.ts';
import { JOINED_USER } from '../users.ts';

// PostgreSQL's types for the grant's columns: the arrays a batch's parameters are cast to.
const GRANT_TYPES: Record<(typeof GRANT_COLUMNS)[number], 'text' | 'bigint' | 'integer'> = {
  id: 'text',
  user_id: 'text',
  client_id: 'text',
  scope: 'text',
  auth_time: 'bigint',
  created_at: 'bigint',
  revoked_at: 'bigint',
  refresh_generation: 'integer',
  refresh_expires_at: 'bigint',
  refresh_issued_at: 'bigint',
  resource: 'text',
  amr: 'text',
  acr: 'text',
  claims_request: 'text',
  sid: 'text',
  dpop_jkt: 'text',
};

/**
 * Codes' redemptions: one array parameter per column, in GRANT_COLUMNS' order. A grant is inserted
 * only while its user exists and is not disabled, and only if no grant has its id (the code was not
 * redeemed before); the ids returned are the redemptions that won.
 */
export const REDEEM_AUTHORIZATION_CODES = `insert into grants (${GRANT_COLUMNS.join(', ')})
  select v.* from unnest(${GRANT_COLUMNS.map((c, i) => `$${i + 1}::${GRANT_TYPES[c]}[]`).join(', ')})
    as v(${GRANT_COLUMNS.join(', ')})
  where exists (select 1 from users u where u.id = v.user_id and u.disabled = 0)
  on conflict (id) do nothing returning id`;

/**
 * Refreshes (Store.rotateTokenFamily). Parameters, an array each: now, the grant, the generation
 * presented, the client, the scope asked for (null: the grant's), the absolute lifetime, the
 * lifetime, the resource asked for (null: any), the proof's DPoP key (null: none), which a bound
 * grant's must be. Returns each grant rotated (g_) with its user (u_); a refresh that does not hold
 * has no row.
 */
export const ROTATE_TOKEN_FAMILIES = `with v as (
    select * from unnest($1::bigint[], $2::text[], $3::integer[], $4::text[], $5::text[], $6::bigint[], $7::bigint[],
        $8::text[], $9::text[])
      as v(now, grant_id, generation, client_id, scope, absolute_ttl, ttl, resource, jkt)
  ), g as (
    update grants set refresh_generation = grants.refresh_generation + 1, refresh_issued_at = v.now,
      refresh_expires_at = least(v.now + v.ttl, grants.created_at + v.absolute_ttl)
    from v
    where grants.id = v.grant_id and grants.refresh_generation = v.generation and grants.client_id = v.client_id
      and grants.revoked_at is null and grants.refresh_expires_at > v.now and grants.created_at > v.now - v.absolute_ttl
      and (v.scope is null or array_remove(string_to_array(v.scope, ' '), '') <@ string_to_array(grants.scope, ' '))
      and (v.resource is null or grants.resource is null or grants.resource = v.resource)
      and (grants.dpop_jkt is null or grants.dpop_jkt = v.jkt)
      and exists (select 1 from users u where u.id = grants.user_id and u.disabled = 0)
    returning grants.*
  )
  select ${prefixed('g', GRANT_COLUMNS)}, ${JOINED_USER} from g join users u on u.id = g.user_id`;
