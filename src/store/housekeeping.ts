// Removes what can no longer be used, so the tables stay bounded under steady traffic: sessions,
// refresh tokens and revocation records that expired, events older than their retention, and grants
// no live access token can point at once their code has expired (after a grace period in which a
// replay still revokes what the code issued). On N instances each runs it; the deletes are idempotent.
import type { ExpressionBuilder } from 'kysely';
import type { AggregateClass } from './aggregate.ts';
import type { Database } from './tables.ts';

export interface PurgeInput {
  now: number;
  codeTtl: number;
  /** How long after a code expires its grant is kept, so that its replay is still recognised as one. */
  codeGrace: number;
  accessTokenTtl: number;
  /** Seconds events are kept (TESSERA_EVENT_RETENTION). */
  eventRetention: number;
  /** Seconds after which a throttle's failures no longer count (its window, or its lock if longer). */
  throttleHorizon: number;
}

type Where<Table extends keyof Database> = ExpressionBuilder<Database, Table>;

/** The deletes of every table, shared by SQLite and PostgreSQL (Store.purgeExpired), on top of `Base`. */
export function withPurge<Base extends AggregateClass>(Base: Base) {
  abstract class Purge extends Base {
    /**
     * A grant goes once no access token of it can still be alive: revoked, or without a live refresh
     * token, for longer than an access token lives (its last access token was issued with its current
     * refresh token). It is kept at least as long as its code (and the grace after it)
     * too: its row is what refuses that code a second time.
     */
    async purgeExpired(input: PurgeInput): Promise<Record<string, number>> {
      const { now } = input;
      const horizon = now - input.accessTokenTtl;
      // A session that ran out is no logout: nobody is told (./session-ends.ts ends the others).
      const sessions = await this.write(this.db.deleteFrom('sessions').where('expires_at', '<=', now));
      const revoked = await this.write(this.db.deleteFrom('revoked_access_tokens').where('expires_at', '<=', now));
      const gone = (eb: Where<'grants'>) =>
        eb.and([
          eb('created_at', '<', now - input.codeTtl - input.codeGrace),
          eb.or([
            eb('revoked_at', '<', horizon),
            eb.and([
              eb('created_at', '<', horizon),
              eb('refresh_issued_at', '<', horizon),
              eb('refresh_expires_at', '<=', now),
            ]),
          ]),
        ]);
      const grants = await this.write(this.db.deleteFrom('grants').where(gone));
      const events = await this.write(this.db.deleteFrom('events').where('at', '<', now - input.eventRetention));
      // Not while attempts are in flight on the key (their lease running): they are counted there.
      const stale = this.db
        .deleteFrom('throttles')
        .where('last_failure_at', '<', now - input.throttleHorizon)
        .where('pending_until', '<=', now);
      const throttles = await this.write(stale);
      // A challenge answered is kept only until it would have expired: then it is refused as expired.
      const spent = this.db.deleteFrom('webauthn_challenges').where('expires_at', '<=', now);
      const challenges = await this.write(spent);
      // Webhook deliveries made or given up, kept as long as events, with their attempts.
      const done = (eb: Where<'webhook_deliveries'>) =>
        eb.and([eb('status', '!=', 'pending'), eb('created_at', '<', now - input.eventRetention)]);
      const oldDeliveries = this.db.selectFrom('webhook_deliveries').select('id').where(done);
      await this.write(this.db.deleteFrom('webhook_attempts').where('delivery_id', 'in', oldDeliveries));
      const deliveries = await this.write(this.db.deleteFrom('webhook_deliveries').where(done));
      // Links' tokens once they can no longer be used; mails sent or given up, kept as long as events.
      const tokens = await this.write(this.db.deleteFrom('mail_tokens').where('expires_at', '<=', now));
      const sent = (eb: Where<'mails'>) =>
        eb.and([eb('status', '!=', 'pending'), eb('created_at', '<', now - input.eventRetention)]);
      const mails = await this.write(this.db.deleteFrom('mails').where(sent));
      // Assertions' jtis once the assertions expired (refused as expired then); pushed requests unused.
      const jtis = await this.write(this.db.deleteFrom('used_jtis').where('expires_at', '<=', now));
      const pushed = await this.write(this.db.deleteFrom('pushed_requests').where('expires_at', '<=', now));
      // Device authorizations a grace after they expired: until then a poll hears expired_token (RFC 8628 §3.5).
      const expiredDevices = this.db
        .deleteFrom('device_authorizations')
        .where('expires_at', '<=', now - input.codeGrace);
      const devices = await this.write(expiredDevices);
      // Logout tokens posted or given up (Back-Channel Logout 1.0), kept as long as events.
      const posted = (eb: Where<'logout_deliveries'>) =>
        eb.and([eb('status', '!=', 'pending'), eb('created_at', '<', now - input.eventRetention)]);
      const logouts = await this.write(this.db.deleteFrom('logout_deliveries').where(posted));
      return {
        sessions,
        revoked_access_tokens: revoked,
        grants,
        events,
        throttles,
        webauthn_challenges: challenges,
        webhook_deliveries: deliveries,
        mail_tokens: tokens,
        mails,
        used_jtis: jtis,
        pushed_requests: pushed,
        device_authorizations: devices,
        logout_deliveries: logouts,
      };
    }
  }
  return Purge;
}

/** How long after a code expires its grant is kept, so that its replay is still recognised as one. */
export const CODE_GRACE = 10 * 60;

/** What housekeeping asks of the store (./store.ts Store), named here so neither file imports the other. */
export interface PurgeStore {
  purgeExpired(input: PurgeInput): Promise<Record<string, number>>;
}

/** The settings housekeeping reads (../config/index.ts Config has them), in seconds. */
export interface HousekeepingSettings {
  accessTokenTtl: number;
  codeTtl: number;
  eventRetention: number;
  /** The sign-in throttle's: a key is forgotten once neither can still refuse an attempt. */
  throttle: { window: number; lockSeconds: number };
  housekeepingInterval: number;
}

export async function purgeOnce(
  store: PurgeStore,
  config: Omit<HousekeepingSettings, 'housekeepingInterval'>,
  now: number,
): Promise<Record<string, number>> {
  return store.purgeExpired({
    now,
    codeTtl: config.codeTtl,
    codeGrace: CODE_GRACE,
    accessTokenTtl: config.accessTokenTtl,
    eventRetention: config.eventRetention,
    throttleHorizon: Math.max(config.throttle.window, config.throttle.lockSeconds),
  });
}

export function startHousekeeping(
  store: PurgeStore,
  config: HousekeepingSettings,
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void },
  now: () => number = () => Math.floor(Date.now() / 1000),
): { stop(): void } {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    purgeOnce(store, config, now())
      .then((deleted) => {
        if (Object.values(deleted).some((n) => n > 0)) log.info({ deleted }, 'housekeeping');
      })
      .catch((err: unknown) => log.error({ err }, 'housekeeping failed'))
      .finally(() => {
        running = false;
      });
  }, config.housekeepingInterval * 1000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
