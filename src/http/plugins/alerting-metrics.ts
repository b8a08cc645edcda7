// The gauges an operator's alerts read besides the counters (docs/production.md, "Alerts"), on the
// registry of ./metrics.ts: the accounts locked now, and the webhook deliveries not yet made with
// the age of the oldest. Each is one query, run when Prometheus scrapes (never on a request); every
// instance answers the same, from the shared database, so an alert takes their max(). With the
// database unreachable a gauge keeps the value it last read: the scrape still answers (the other
// metrics, tessera_database_faults_total among them, are what an outage is alerted on).
import { Gauge, type Registry } from 'prom-client';
import type { ThrottlePolicy } from '../../authn/throttle.ts';
import type { Store } from '../../store/store.ts';

export function alertingMetrics(
  registry: Registry,
  store: Pick<Store, 'countLockedAccounts' | 'deliveryBacklog'>,
  options: { throttle: ThrottlePolicy; now: () => number },
): void {
  new Gauge({
    name: 'tessera_locked_accounts',
    help: 'Accounts whose sign-in is locked now (failures reached TESSERA_SIGNIN_LOCK_AFTER), from any browser',
    registers: [registry],
    async collect() {
      const locked = await lastKnown(() => store.countLockedAccounts(options.now(), options.throttle));
      if (locked !== undefined) this.set(locked);
    },
  });
  new Gauge({
    name: 'tessera_webhook_deliveries_pending',
    help: 'Webhook deliveries not yet made: due, or waiting to be tried again',
    registers: [registry],
    async collect() {
      const backlog = await lastKnown(() => store.deliveryBacklog());
      if (backlog) this.set(backlog.pending);
    },
  });
  new Gauge({
    name: 'tessera_webhook_oldest_pending_seconds',
    help: 'Seconds since the oldest webhook delivery not yet made was enqueued (0 when none is waiting)',
    registers: [registry],
    async collect() {
      const backlog = await lastKnown(() => store.deliveryBacklog());
      if (!backlog) return;
      const { oldestCreatedAt } = backlog;
      this.set(oldestCreatedAt === null ? 0 : Math.max(0, options.now() - oldestCreatedAt));
    },
  });
}

/** The query's answer, or undefined when the database could not give one (the gauge keeps its value). */
async function lastKnown<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch {
    return undefined;
  }
}
