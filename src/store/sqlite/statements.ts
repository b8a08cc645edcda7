// SQLite's two writes of every token request, written out by hand and run by the writer (./writer.ts)
// as statements prepared once; the reads every request makes are shared with PostgreSQL (../grants.ts,
// ../sessions.ts, ../users.ts).
import { GRANT_COLUMNS } from '../grant-rows.ts';

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
