// Starting and stopping as a production instance should: at start, wait for a database that is not
// reachable yet (a container started before PostgreSQL, a failover in progress) with backoff, but
// not forever; at SIGTERM, say "not ready" at once, keep serving while load balancers notice, then
// finish what is in flight and close, within a bound.
import { type Requester, securityEvent } from './events/index.ts';
import { DatabaseUnavailable } from './store/faults.ts';
import type { RestoreFence, RestoreStore } from './store/restores.ts';
import { newId } from './tokens/opaque.ts';

/** A DATABASE_URL fit for a log line: the credentials before `@` and any password parameter masked. */
export function describeDatabase(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@').replace(/([?&](?:ssl)?password=)[^&]*/gi, '$1***');
}

/**
 * The listening socket systemd passes under socket activation (sd_listen_fds(3)): fd 3, when
 * LISTEN_PID names this process (else the variables were meant for another). systemd keeps the socket
 * open across a restart, so connections wait in its queue between one process and the next instead
 * of being refused (a proxy's 502); docs/deployment.md has the units.
 */
export function inheritedSocket(env: Record<string, string | undefined>, pid = process.pid): number | undefined {
  if (env.LISTEN_PID === undefined || env.LISTEN_PID !== String(pid)) return undefined;
  if (env.LISTEN_FDS !== '1') {
    throw new Error(`socket activation passed ${env.LISTEN_FDS ?? 'no'} sockets; Tessera listens on exactly one`);
  }
  return 3;
}

/** Whether the instance is draining (after SIGTERM): /readyz answers 503, answers close their connection. */
export class Lifecycle {
  draining = false;
}

/** Backoff between attempts to reach the database: 0.5 s, doubling, at most 5 s. */
export function backoff(attempt: number): number {
  return Math.min(500 * 2 ** (attempt - 1), 5_000);
}

/**
 * Runs `connect` until it succeeds; while it fails with DatabaseUnavailable (the server unreachable,
 * starting up, out of connections), retries with backoff for up to `timeoutSeconds`, reporting each
 * attempt. Any other error (a wrong password, an unknown database) is thrown at once, as is the last
 * unavailability once the time is up.
 */
export async function waitForDatabase(
  connect: () => Promise<void>,
  timeoutSeconds: number,
  report: (attempt: number, error: Error, retryInMs: number) => void,
  sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
  now = () => Date.now(),
): Promise<void> {
  const deadline = now() + timeoutSeconds * 1000;
  for (let attempt = 1; ; attempt++) {
    try {
      await connect();
      return;
    } catch (error) {
      if (!(error instanceof DatabaseUnavailable)) throw error;
      const wait = Math.min(backoff(attempt), Math.max(0, deadline - now()));
      if (wait <= 0) throw error;
      report(attempt, error.fault, wait);
      await sleep(wait);
    }
  }
}

/**
 * After a restore (src/store/restores.ts): at every start, fences the database if it was restored
 * from a backup `tessera backup` marked; with `force` (`tessera restore-finish`), in any case. Every
 * session and refresh-token family ends and the signing keys go (KeyStore.open makes new ones, which
 * sign at once). The fence, or undefined when there was nothing to do; and the epoch to seal codes in.
 */
export async function finishRestore(
  store: RestoreStore,
  options: { force: boolean; requester: Requester; now?: number },
): Promise<{ fence: RestoreFence | undefined; epoch: string }> {
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const id = newId();
  const event = securityEvent('database.restored', now, {
    requester: options.requester,
    data: { fence: id, finished_by: options.force ? 'restore-finish' : 'start' },
  });
  const fence = await store.fenceRestore({ id, now, force: options.force, event });
  return { fence, epoch: await store.restoreEpoch() };
}
