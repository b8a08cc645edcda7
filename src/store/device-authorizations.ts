// Device authorizations (RFC 8628): what the device authorization endpoint starts, the verification
// page decides and the token endpoint polls (src/oauth/device). Kept under the hashes of the device
// code and the user code, never the codes. Every change is one conditional write, so that of two at
// once, on any instances, exactly one wins: a decision only of a pending, unexpired request; a poll
// only from the poll it follows. Redeeming an approval is inserting the grant under the request's id
// (GrantStore.redeemAuthorizationCode), which happens once. Housekeeping deletes what expired.
import type { SecurityEvent } from '../events/index.ts';
import type { AggregateClass } from './aggregate.ts';
import { insertEventsWhen } from './outbox.ts';
import type { DeviceAuthorizationRow } from './tables.ts';

export type DeviceAuthorizationStatus = 'pending' | 'approved' | 'denied';

/** Who approved or denied a request, and how they had signed in (for the ID token). */
export interface DeviceDecision {
  status: 'approved' | 'denied';
  userId: string;
  authTime: number;
  /** RFC 8176 amr, space-separated; null: none. */
  amr: string | null;
  acr: string | null;
  sid: string | null;
}

export interface DeviceAuthorization {
  /** Random; the id of the grant its approval issues. */
  id: string;
  deviceCodeHash: string;
  userCodeHash: string;
  clientId: string;
  /** The scopes asked for, space-separated. */
  scope: string;
  resource: string | null;
  status: DeviceAuthorizationStatus;
  /** Set once decided. */
  decision: Omit<DeviceDecision, 'status'> | null;
  /** Seconds the device waits between polls (RFC 8628 §3.2), grown by slow_down (§3.5). */
  interval: number;
  lastPolledAt: number | null;
  expiresAt: number;
  createdAt: number;
}

export interface DeviceAuthorizationStore {
  /** Stores a new request; false, having written nothing, when its user code's hash is taken (draw another). */
  createDeviceAuthorization(authorization: DeviceAuthorization): Promise<boolean>;
  getDeviceAuthorizationByDeviceCode(deviceCodeHash: string): Promise<DeviceAuthorization | undefined>;
  getDeviceAuthorizationByUserCode(userCodeHash: string): Promise<DeviceAuthorization | undefined>;
  /**
   * Records the person's answer, with its event, only if the request is still pending and unexpired
   * at `now`; false when it was decided before (or concurrently) or has expired.
   */
  decideDeviceAuthorization(id: string, decision: DeviceDecision, now: number, event: SecurityEvent): Promise<boolean>;
  /**
   * Records a poll at `now` with the interval from now on, only if the last poll is still
   * `previousPoll` (null: none yet); false when a concurrent poll came first.
   */
  recordDevicePoll(id: string, previousPoll: number | null, now: number, interval: number): Promise<boolean>;
}

/** Device authorizations (RFC 8628): the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withDeviceAuthorizations<Base extends AggregateClass>(Base: Base) {
  abstract class DeviceAuthorizations extends Base implements DeviceAuthorizationStore {
    async createDeviceAuthorization(a: DeviceAuthorization): Promise<boolean> {
      const row: DeviceAuthorizationRow = {
        id: a.id,
        device_code_hash: a.deviceCodeHash,
        user_code_hash: a.userCodeHash,
        client_id: a.clientId,
        scope: a.scope,
        resource: a.resource,
        status: a.status,
        user_id: null,
        auth_time: null,
        amr: null,
        acr: null,
        sid: null,
        poll_interval: a.interval,
        last_polled_at: null,
        expires_at: a.expiresAt,
        created_at: a.createdAt,
        decided_at: null,
      };
      const insert = this.db
        .insertInto('device_authorizations')
        .values(row)
        .onConflict((oc) => oc.doNothing());
      return (await this.write(insert)) === 1;
    }

    getDeviceAuthorizationByDeviceCode(deviceCodeHash: string) {
      return this.#find('device_code_hash', deviceCodeHash);
    }

    getDeviceAuthorizationByUserCode(userCodeHash: string) {
      return this.#find('user_code_hash', userCodeHash);
    }

    async #find(column: 'device_code_hash' | 'user_code_hash', hash: string) {
      const row = await this.db
        .selectFrom('device_authorizations')
        .selectAll()
        .where(column, '=', hash)
        .executeTakeFirst();
      return row && toDeviceAuthorization(row);
    }

    async decideDeviceAuthorization(
      id: string,
      d: DeviceDecision,
      now: number,
      event: SecurityEvent,
    ): Promise<boolean> {
      const decide = this.db
        .updateTable('device_authorizations')
        .set({
          status: d.status,
          user_id: d.userId,
          auth_time: d.authTime,
          amr: d.amr,
          acr: d.acr,
          sid: d.sid,
          decided_at: now,
        })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .where('expires_at', '>', now);
      // The event only with the decision, in the same write: written if the row is now as decided.
      const decidedRow = this.db
        .selectFrom('device_authorizations')
        .select('id')
        .where('id', '=', id)
        .where('status', '=', d.status)
        .where('user_id', '=', d.userId)
        .where('decided_at', '=', now);
      return (await this.write(decide, ...insertEventsWhen(this.db, event, decidedRow))) === 1;
    }

    async recordDevicePoll(id: string, previousPoll: number | null, now: number, interval: number): Promise<boolean> {
      const poll = this.db
        .updateTable('device_authorizations')
        .set({ last_polled_at: now, poll_interval: interval })
        .where('id', '=', id)
        .where((eb) =>
          previousPoll === null ? eb('last_polled_at', 'is', null) : eb('last_polled_at', '=', previousPoll),
        );
      return (await this.write(poll)) === 1;
    }
  }
  return DeviceAuthorizations;
}

function toDeviceAuthorization(row: DeviceAuthorizationRow): DeviceAuthorization {
  const decided = row.user_id !== null;
  return {
    id: row.id,
    deviceCodeHash: row.device_code_hash,
    userCodeHash: row.user_code_hash,
    clientId: row.client_id,
    scope: row.scope,
    resource: row.resource,
    status: row.status as DeviceAuthorizationStatus,
    decision: decided
      ? { userId: row.user_id!, authTime: Number(row.auth_time), amr: row.amr, acr: row.acr, sid: row.sid }
      : null,
    interval: Number(row.poll_interval),
    lastPolledAt: row.last_polled_at === null ? null : Number(row.last_polled_at),
    expiresAt: Number(row.expires_at),
    createdAt: Number(row.created_at),
  };
}
