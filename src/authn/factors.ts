// What a session records of how its user signed in (each factor, with its time), and what those
// factors add up to: the authentication methods (`amr`, RFC 8176) and the level reached (`acr`, OIDC
// Core §2), the two claims an ID token says them with.
import { type AcrValue, ACR_VALUES, Level, levelOfAcr } from './levels.ts';
import { steps } from './registry.ts';
import type { Factor } from './factor.ts';
import type { Step } from './step.ts';

/**
 * The level factors reach. Each distinct step counts as many factors as one use of it proves (a
 * passkey with user verification proves two); two make `mfa`, and `phr` is `mfa` with a
 * phishing-resistant step among them.
 */
export function levelOf(factors: readonly Factor[], registry: readonly Step[] = steps()): Level {
  if (factors.length === 0) return Level.none;
  let count = 0;
  let phishingResistant = false;
  for (const method of new Set(factors.map((f) => f.method))) {
    const step = registry.find((s) => s.method === method);
    count += step?.factors ?? 1;
    phishingResistant ||= step?.phishingResistant ?? false;
  }
  if (count < 2) return Level.sfa;
  return phishingResistant ? Level.phr : Level.mfa;
}

/** The ID token's `amr`: every factor's values, once each, and `mfa` when they make two factors (RFC 8176 §2). */
export function amrOf(factors: readonly Factor[], registry: readonly Step[] = steps()): string[] {
  const amr = new Set(factors.flatMap((f) => f.amr));
  if (levelOf(factors, registry) >= Level.mfa) amr.add('mfa');
  return [...amr];
}

/**
 * The ID token's `acr`: of the values the request asked for (acr_values, OIDC Core §3.1.2.1), the
 * highest the factors meet; when it asked for none the factors meet, the level they reach.
 */
export function acrOf(
  factors: readonly Factor[],
  asked: readonly string[],
  registry: readonly Step[] = steps(),
): AcrValue | null {
  const reached = levelOf(factors, registry);
  if (reached === Level.none) return null;
  let best: Level = Level.none;
  for (const value of asked) {
    const level = levelOfAcr(value);
    if (level !== undefined && level <= reached && level > best) best = level;
  }
  return ACR_VALUES[(best === Level.none ? reached : best) - 1]!;
}

/** The latest factor's time: what max_age counts from (issue 33). */
export function lastFactorAt(factors: readonly Factor[]): number {
  return factors.reduce((latest, f) => Math.max(latest, f.at), 0);
}
