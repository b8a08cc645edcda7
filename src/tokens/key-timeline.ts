// When a signing key is published, signs, retires and goes: the schedule that keeps every token
// verifiable during a rotation, by every instance and by every relying party's cached JWKS. A key's
// state follows from its times alone, so all instances change keys at the same moment by their own
// clocks, with no write at the switch.
//
//   created ──(published: stage delay = JWKS max-age + key reload interval + clock skew)──> activates
//   ──(signs until its successor activates)──> retired ──(published for the longest token lifetime
//   + key reload interval + clock skew)──> removed
//
// A relying party that fetched the JWKS just before a key was created holds a copy without it for
// the JWKS's max-age; an instance learns of the key within its reload interval. Once both have
// passed, every copy has the key, and only then does it sign.
import type { StoredSigningKey } from '../store/signing-keys.ts';

/** Cache-Control max-age of the JWKS, in seconds. */
export const JWKS_MAX_AGE = 300;
/** Allowance for instances' clocks disagreeing, in seconds. */
export const CLOCK_SKEW = 60;

export interface KeyTimeline {
  /** Seconds between an instance's reloads of the keys (TESSERA_KEY_RELOAD_INTERVAL). */
  reloadInterval: number;
  /** The longest lifetime of a token a key signs: access and ID tokens. */
  tokenLifetime: number;
  /** Seconds between automatic rotations (TESSERA_KEY_ROTATION_INTERVAL); 0 for none. */
  rotationInterval: number;
}

export const DEFAULT_TIMELINE: KeyTimeline = { reloadInterval: 60, tokenLifetime: 86_400, rotationInterval: 0 };

export function keyTimeline(config: {
  keyReloadInterval: number;
  keyRotationInterval: number;
  accessTokenTtl: number;
  idTokenTtl: number;
}): KeyTimeline {
  return {
    reloadInterval: config.keyReloadInterval,
    tokenLifetime: Math.max(config.accessTokenTtl, config.idTokenTtl),
    rotationInterval: config.keyRotationInterval,
  };
}

/** How long a new key is published before it signs. */
export function stageDelay(t: KeyTimeline): number {
  return JWKS_MAX_AGE + t.reloadInterval + CLOCK_SKEW;
}

/** How long a key stays published once its successor signs. */
export function retiredFor(t: KeyTimeline): number {
  return t.tokenLifetime + t.reloadInterval + CLOCK_SKEW;
}

export type KeyState = 'next' | 'active' | 'retired' | 'expired';

export interface KeyDates {
  kid: string;
  alg: string;
  state: KeyState;
  createdAt: number;
  activatesAt: number;
  /** When its successor activated (or will): from then on it only verifies. */
  retiresAt: number | null;
  /** When it leaves the JWKS and the database. */
  removedAt: number | null;
}

/** Every key's state at `now`, per algorithm in the order they activate. */
export function keyStates(rows: StoredSigningKey[], now: number, t: KeyTimeline): KeyDates[] {
  const byAlg = new Map<string, StoredSigningKey[]>();
  for (const row of rows) byAlg.set(row.alg, [...(byAlg.get(row.alg) ?? []), row]);
  const states: KeyDates[] = [];
  for (const keys of byAlg.values()) {
    // In the order they activate; a key activated the same second as the one it replaces (`--now`)
    // comes after it.
    keys.sort(
      (a, b) =>
        a.activatesAt - b.activatesAt ||
        (b.successorOf === a.kid ? -1 : a.successorOf === b.kid ? 1 : 0) ||
        a.createdAt - b.createdAt ||
        (a.kid < b.kid ? -1 : 1),
    );
    keys.forEach((row, i) => {
      const successor = keys[i + 1];
      const retiresAt = successor ? successor.activatesAt : null;
      const removedAt = retiresAt === null ? null : retiresAt + retiredFor(t);
      const state: KeyState =
        row.activatesAt > now
          ? 'next'
          : retiresAt === null || retiresAt > now
            ? 'active'
            : removedAt! > now
              ? 'retired'
              : 'expired';
      states.push({
        kid: row.kid,
        alg: row.alg,
        state,
        createdAt: row.createdAt,
        activatesAt: row.activatesAt,
        retiresAt,
        removedAt,
      });
    });
  }
  return states;
}

/** The next moment a key's state changes (an activation or a removal), or Infinity. */
export function nextChange(states: KeyDates[], now: number): number {
  let next = Infinity;
  for (const s of states) {
    for (const at of [s.activatesAt, s.removedAt]) if (at !== null && at > now && at < next) next = at;
  }
  return next;
}
