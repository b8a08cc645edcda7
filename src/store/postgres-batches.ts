// PostgreSQL's hot writes, batched (./batches.ts): a code's redemption (the grant's insert) and the
// usual refresh (Store.rotateValidTokenFamily). Concurrent calls share one statement and one commit.
import { StatementBatches } from './batches.ts';
import { GRANT_COLUMNS } from './columns.ts';
import { ROTATE_VALID_TOKEN_FAMILIES_SQL, type TokenFamily, toTokenFamily } from './joins.ts';
import type { RotateValidTokenFamily } from './store.ts';
import type { GrantRow } from './types.ts';

/** Runs a statement written out by hand; its rows. */
export type RunStatement = (text: string, parameters: unknown[]) => Promise<Array<Record<string, unknown>>>;

// PostgreSQL's types for the grant's columns: the arrays a batch's parameters are cast to.
const GRANT_TYPES: Record<(typeof GRANT_COLUMNS)[number], 'text' | 'bigint' | 'integer'> = {
  id: 'text', user_id: 'text', client_id: 'text', scope: 'text', auth_time: 'bigint', created_at: 'bigint', revoked_at: 'bigint',
  refresh_generation: 'integer', refresh_expires_at: 'bigint', refresh_issued_at: 'bigint',
};

/**
 * Store.redeemAuthorizationCode for a batch: one array parameter per column, in GRANT_COLUMNS'
 * order. A grant is inserted only while its user exists and is not disabled, and only if no grant
 * has its id (the code was not redeemed before); the ids returned are the redemptions that won.
 */
const REDEEM_AUTHORIZATION_CODES_SQL = `insert into grants (${GRANT_COLUMNS.join(', ')})
  select v.* from unnest(${GRANT_COLUMNS.map((c, i) => `$${i + 1}::${GRANT_TYPES[c]}[]`).join(', ')}) as v(${GRANT_COLUMNS.join(', ')})
  where exists (select 1 from users u where u.id = v.user_id and u.disabled = 0)
  on conflict (id) do nothing returning id`;

export class PostgresBatches {
  readonly #redemptions: StatementBatches<GrantRow, true>;
  readonly #rotations: StatementBatches<RotateValidTokenFamily, TokenFamily>;

  constructor(run: RunStatement) {
    this.#redemptions = new StatementBatches({
      key: (grant) => grant.id,
      statement: async (grants) => {
        const rows = await run(REDEEM_AUTHORIZATION_CODES_SQL, GRANT_COLUMNS.map((c) => grants.map((g) => g[c])));
        return new Map(rows.map((row) => [row.id as string, true as const]));
      },
    });
    this.#rotations = new StatementBatches({
      key: (input) => input.grantId,
      statement: async (inputs) => {
        const rows = await run(ROTATE_VALID_TOKEN_FAMILIES_SQL, [
          inputs.map((i) => i.now), inputs.map((i) => i.grantId), inputs.map((i) => i.generation),
          inputs.map((i) => i.clientId), inputs.map((i) => i.absoluteTtl), inputs.map((i) => i.ttl),
        ]);
        return new Map(rows.map((row) => [row.g_id as string, toTokenFamily(row)!]));
      },
    });
  }

  async redeemAuthorizationCode(grant: GrantRow): Promise<boolean> {
    return (await this.#redemptions.run(grant)) === true;
  }

  rotateValidTokenFamily(input: RotateValidTokenFamily): Promise<TokenFamily | undefined> {
    return this.#rotations.run(input);
  }
}
