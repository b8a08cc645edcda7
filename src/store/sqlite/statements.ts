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
   * A code's redemption: the grant under the code's id (parameters in GRANT_COLUMNS' order), only if
   * it is the first and its user is active. The WHERE also settles SQLite's parsing of ON CONFLICT
   * after INSERT … SELECT.
   */
  insertGrant: `insert into grants (${GRANT_COLUMNS.join(', ')})
    select ${GRANT_COLUMNS.map((_, i) => `?${i + 1}`).join(', ')}
    where exists (select 1 from users where id = ?${GRANT_COLUMNS.indexOf('user_id') + 1} and disabled = 0)
    on conflict (id) do nothing`,
  /**
   * A rotation: the family (?1) moves on only from the generation presented (?2), and only while not
   * revoked; issued ?3, expiring ?4.
   */
  advanceFamily: `update grants set refresh_generation = ?2 + 1, refresh_issued_at = ?3, refresh_expires_at = ?4
    where id = ?1 and refresh_generation = ?2 and revoked_at is null`,
};
