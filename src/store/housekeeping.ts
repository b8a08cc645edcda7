// Removes what can no longer be used, so the tables stay bounded under steady traffic: sessions,
// refresh tokens and revocation records that expired, events older than their retention, and grants
// no live access token can point at once their code has expired (after a grace period in which a
// replay still revokes what the code issued). On N instances each runs it; the deletes are idempotent.
import type { Config } from '../config/index.ts';
import type { Store } from './store.ts';

/** How long after a code expires its grant is kept, so that its replay is still recognised as one. */
export const CODE_GRACE = 10 * 60;

export async function purgeOnce(
  store: Store,
  config: Pick<Config, 'accessTokenTtl' | 'codeTtl' | 'eventRetention' | 'throttle'>,
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
  store: Store,
  config: Pick<Config, 'accessTokenTtl' | 'codeTtl' | 'eventRetention' | 'throttle' | 'housekeepingInterval'>,
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
