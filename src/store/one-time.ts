// What may be used once across every instance, so kept in the database rather than in memory: the
// `jti`s of client assertions already presented (RFC 7523 §3), and pushed authorization requests
// (RFC 9126 §2.2) waiting for their one use at the authorization endpoint. Each use is one
// conditional write (an insert that conflicts, a delete that returns the row), so that of two uses
// at once, on any instances, exactly one succeeds. Housekeeping deletes what expired (./housekeeping.ts).
import type { AggregateClass } from './aggregate.ts';

/** The longest `jti` kept for one use (a client assertion's, a DPoP proof's, an ID-JAG's): longer is refused. */
export const MAX_JTI = 256;

/** A pushed authorization request: who pushed it and its parameters. */
export interface PushedRequest {
  clientId: string;
  params: Record<string, string>;
}

export interface OneTimeStore {
  /**
   * Records `id` (a hash of what it identifies) as used until `expiresAt`: true the first time, false
   * when it was used before (and has not yet been purged).
   */
  useOnce(id: string, expiresAt: number): Promise<boolean>;
  /** Keeps a pushed request under `id` (the hash of its request_uri) until `expiresAt`. */
  pushRequest(id: string, request: PushedRequest, expiresAt: number): Promise<void>;
  /** The pushed request under `id`, deleted as it is taken; undefined when unknown, used or expired. */
  takePushedRequest(id: string, now: number): Promise<PushedRequest | undefined>;
}

/** One-time ids and pushed requests: the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withOneTime<Base extends AggregateClass>(Base: Base) {
  abstract class OneTime extends Base implements OneTimeStore {
    async useOnce(id: string, expiresAt: number): Promise<boolean> {
      const insert = this.db
        .insertInto('used_jtis')
        .values({ id, expires_at: expiresAt })
        .onConflict((oc) => oc.column('id').doNothing());
      return (await this.write(insert)) === 1;
    }

    async pushRequest(id: string, request: PushedRequest, expiresAt: number): Promise<void> {
      const row = { id, client_id: request.clientId, params: JSON.stringify(request.params), expires_at: expiresAt };
      await this.write(this.db.insertInto('pushed_requests').values(row));
    }

    async takePushedRequest(id: string, now: number): Promise<PushedRequest | undefined> {
      const taken = this.db
        .deleteFrom('pushed_requests')
        .where('id', '=', id)
        .where('expires_at', '>', now)
        .returning(['client_id', 'params']);
      const [row] = await this.writeRows<{ client_id: string; params: string }>(taken);
      return row && { clientId: row.client_id, params: JSON.parse(row.params) as Record<string, string> };
    }
  }
  return OneTime;
}
