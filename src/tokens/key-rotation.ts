// Rotating signing keys on the schedule of ./key-timeline.ts: `tessera keys rotate` and the automatic
// rotation every TESSERA_KEY_ROTATION_INTERVAL stage a new key (published now, signing once every
// cached JWKS and every instance has it); `--now` activates one at once, for a compromised key.
// A new key names the key it replaces, and only one key may replace a given key, so instances that
// rotate at the same moment insert one key between them.
import { type Requester, securityEvent } from '../events/index.ts';
import { stageDelay } from './key-timeline.ts';
import { generateKey, type KeyStore, SIGNING_ALGS, type SigningAlg } from './keystore.ts';

export interface Rotation {
  kid: string;
  alg: SigningAlg;
  activatesAt: number;
  /** A rotation was under way already (staged here or by another instance): this is its key. */
  already: boolean;
}

/** Starts a rotation of `alg`: staged, or with `emergency` the new key signs at once. */
export async function rotateKey(
  keys: KeyStore,
  alg: SigningAlg,
  options: { emergency?: boolean; requester: Requester; automatic?: boolean },
): Promise<Rotation> {
  await keys.reload();
  const now = keys.now();
  const head = keys
    .states()
    .filter((s) => s.alg === alg && s.state !== 'expired')
    .at(-1);
  const emergency = options.emergency ?? false;
  const event = (kid: string, activatesAt: number) =>
    securityEvent('key.rotated', now, {
      requester: options.requester,
      data: { alg, kid, activates_at: activatesAt, emergency, automatic: options.automatic ?? false },
    });
  if (head?.state === 'next') {
    if (!emergency) return { kid: head.kid, alg, activatesAt: head.activatesAt, already: true };
    await keys.store.activateSigningKey(head.kid, now, event(head.kid, now));
    await keys.reload();
    return { kid: head.kid, alg, activatesAt: now, already: false };
  }
  const activatesAt = emergency ? now : now + stageDelay(keys.timeline);
  const row = await generateKey(alg, keys.secret, now, activatesAt, head?.kid ?? `initial:${alg}`);
  const inserted = await keys.store.insertSigningKey(row, event(row.kid, activatesAt));
  await keys.reload();
  if (inserted) return { kid: row.kid, alg, activatesAt, already: false };
  const pending = keys.states().find((s) => s.alg === alg && s.state === 'next');
  return pending
    ? { kid: pending.kid, alg, activatesAt: pending.activatesAt, already: true }
    : rotateKey(keys, alg, options);
}

/** The automatic rotation: a staged rotation of each algorithm whose newest key is older than the interval. */
export async function rotateIfDue(keys: KeyStore): Promise<Rotation[]> {
  const interval = keys.timeline.rotationInterval;
  if (interval <= 0) return [];
  const now = keys.now();
  const rotations: Rotation[] = [];
  for (const alg of SIGNING_ALGS) {
    const head = keys
      .states()
      .filter((s) => s.alg === alg && s.state !== 'expired')
      .at(-1);
    if (!head || head.state === 'next' || head.createdAt + interval > now) continue;
    const requester = { ip: null, userAgent: 'tessera key rotation' };
    rotations.push(await rotateKey(keys, alg, { requester, automatic: true }));
  }
  return rotations;
}

/** Removes the keys whose tokens have all expired; they have left the JWKS already. */
export async function removeExpiredKeys(keys: KeyStore): Promise<string[]> {
  const expired = keys
    .states()
    .filter((s) => s.state === 'expired')
    .map((s) => s.kid);
  if (expired.length > 0) {
    await keys.store.deleteSigningKeys(expired);
    await keys.reload();
  }
  return expired;
}

/**
 * Every reload interval: re-read the keys (another instance may have rotated them), rotate when due,
 * remove expired keys. Each instance runs it; what it writes is conditional or idempotent.
 */
export function startKeyMaintenance(
  keys: KeyStore,
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void },
): { stop(): void } {
  let running = false;
  const tick = async () => {
    await keys.reload();
    for (const r of await rotateIfDue(keys)) {
      if (!r.already) log.info({ alg: r.alg, kid: r.kid, activatesAt: r.activatesAt }, 'signing key rotation staged');
    }
    const removed = await removeExpiredKeys(keys);
    if (removed.length > 0) log.info({ kids: removed }, 'expired signing keys removed');
  };
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    tick()
      .catch((err: unknown) => log.error({ err }, 'signing key maintenance failed'))
      .finally(() => (running = false));
  }, keys.timeline.reloadInterval * 1000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
