// SQLite's statements written out by hand: the reads of every request, on the event loop's
// connection (./reader.ts), and the two writes of every token request, on the writer's (./writer.ts).
import { GRANT_COLUMNS, sharedStatements } from '../rows.ts';

export const READS = {
  ...sharedStatements((n) => `?${n}`),
  user: 'select * from users where id = ?',
  consent: 'select scope from consents where user_id = ? and client_id = ?',
  grant: 'select * from grants where id = ?',
};

export const WRITES = {
  /**
   * A code's redemption: the grant under the code's id, only if it is the first and its user is
   * active. The WHERE also settles SQLite's parsing of ON CONFLICT after INSERT … SELECT.
   */
  insertGrant: `insert into grants (${GRANT_COLUMNS.join(', ')}) select ${GRANT_COLUMNS.map((c) => `:${c}`).join(', ')}
    where exists (select 1 from users where id = :user_id and disabled = 0) on conflict (id) do nothing`,
  /** A rotation: the family moves on only from the generation presented, and only while not revoked. */
  advanceFamily: `update grants set refresh_generation = :generation + 1, refresh_issued_at = :now, refresh_expires_at = :expires_at
    where id = :id and refresh_generation = :generation and revoked_at is null`,
};
