// The sign-in policy, after node-oidc-provider's interaction policy (its `login` prompt and checks):
// what a request needs of the session (`requirementFor`), and, while a user signs in, which step
// comes next given what is done and what the user has enrolled (`nextStep`). Whether a session
// already meets a requirement is ./sufficiency.ts.
import { levelOf } from './factors.ts';
import type { Factor } from './factor.ts';
import { Level, levelOfAcr } from './levels.ts';
import { steps } from './registry.ts';
import { ANY_SIGN_IN, type MfaMode, type Requirement } from './requirement.ts';
import type { Step } from './step.ts';

export interface RequestFacts {
  prompts: readonly string[];
  maxAge: number | null;
  /** acr_values (OIDC Core §3.1.2.1), split. */
  acrValues: readonly string[];
  scopes: readonly string[];
  /** The client insists on two factors (`tessera clients create|update --require-mfa`). */
  clientRequiresMfa?: boolean;
  /** Scopes whose tokens need two factors (TESSERA_MFA_SCOPES). */
  mfaScopes?: ReadonlySet<string>;
  /** TESSERA_MFA; absent: `optional`. */
  mfa?: MfaMode;
}

/**
 * What a sign-in with no request behind it needs (the account page's): any sign-in, or with
 * TESSERA_MFA=required two factors, a user without a second factor enrolling one.
 */
export function accountSignIn(mfa: MfaMode): Requirement {
  if (mfa === 'optional') return ANY_SIGN_IN;
  return { ...ANY_SIGN_IN, mfa, ...(mfa === 'required' ? { level: Level.mfa, enrol: true } : {}) };
}

/**
 * What the admin console needs (TESSERA_ADMIN_MFA): two factors, an admin without a second factor
 * enrolling one (unless TESSERA_MFA=off leaves only passkeys); or, with `off`, the account page's.
 */
export function consoleSignIn(adminMfa: 'required' | 'off', mfa: MfaMode): Requirement {
  const account = accountSignIn(mfa);
  if (adminMfa === 'off') return account;
  return { ...account, level: Level.mfa, ...(mfa === 'off' ? {} : { enrol: true }) };
}

/**
 * Whether a request asks nothing of the sign-in (no prompt, max_age or acr_values) and the operator's
 * policy asks nothing either: then any sign-in will do (ANY_SIGN_IN, one shared object), which is what
 * most authorization requests need.
 */
function isPlain(facts: RequestFacts): boolean {
  return (
    facts.prompts.length === 0 &&
    facts.maxAge === null &&
    facts.acrValues.length === 0 &&
    facts.clientRequiresMfa !== true &&
    (facts.mfa ?? 'optional') === 'optional'
  );
}

/**
 * A request's requirement. acr_values lists acceptable levels in order of preference (OIDC Core
 * §3.1.2.1), so the lowest one Tessera knows is what the session must reach; values it does not know
 * are ignored (the claim is voluntary). The client and the scopes can only raise it.
 */
export function requirementFor(facts: RequestFacts, now: number): Requirement {
  const mfaScope = facts.mfaScopes !== undefined && facts.scopes.some((s) => facts.mfaScopes!.has(s));
  if (isPlain(facts) && !mfaScope) return ANY_SIGN_IN;
  const forceLogin = facts.prompts.includes('login');
  const freshSince = forceLogin ? now : facts.maxAge !== null ? now - facts.maxAge : 0;
  const known = facts.acrValues.map(levelOfAcr).filter((l) => l !== undefined);
  let level: Level = known.length > 0 ? (Math.min(...known) as Level) : Level.sfa;
  const mfa = facts.mfa ?? 'optional';
  const operator = facts.clientRequiresMfa === true || mfaScope || mfa === 'required';
  if (operator && level < Level.mfa) level = Level.mfa;
  const enrol = operator && mfa !== 'off';
  return {
    forceLogin,
    freshSince,
    level,
    methods: [],
    acrValues: [...facts.acrValues],
    ...(mfa === 'optional' ? {} : { mfa }),
    ...(enrol ? { enrol } : {}),
  };
}

export type NextStep =
  /** The sign-in is complete. */
  | { kind: 'done' }
  /** One of these steps (enrolled, not yet done), in the order offered. */
  | { kind: 'step'; methods: string[] }
  /** The user has no second factor and the operator's policy needs one: they enrol an authenticator app now. */
  | { kind: 'enrol'; method: string }
  /** The user has no step left that would meet the requirement. */
  | { kind: 'unmet' };

/** The step a user enrols during a sign-in when the operator's policy needs a second factor (./totp/step.ts). */
export const ENROL_DURING_SIGN_IN = 'totp';

/**
 * What a sign-in does after `factors` (those of this sign-in; on a step-up also the session's). The
 * level aimed at is the requirement's, and two factors for a user who enrolled a second one (they
 * enrolled it to be asked for it: TESSERA_MFA=optional, to come). The steps offered are those that
 * reach the aim in one go: a step that could not is not asked for, so nobody types a code in vain.
 */
export function nextStep(
  factors: readonly Factor[],
  need: Requirement,
  enrolled: ReadonlySet<string>,
  all: readonly Step[] = steps(),
): NextStep {
  // TESSERA_MFA=off: authenticator apps and recovery codes are neither asked for nor offered.
  const registry = need.mfa === 'off' ? all.filter((s) => !s.switchable) : all;
  const done = new Set(factors.map((f) => f.method));
  const usable = registry.filter((s) => s.second && enrolled.has(s.method) && !done.has(s.method));
  const missing = need.methods.filter((m) => !done.has(m));
  if (missing.length > 0) {
    return missing.every((m) => usable.some((s) => s.method === m))
      ? { kind: 'step', methods: missing }
      : { kind: 'unmet' };
  }
  const hasSecond = registry.some((s) => s.second && enrolled.has(s.method));
  const aim = Math.max(need.level, hasSecond ? Level.mfa : Level.sfa);
  const reached = levelOf(factors, registry);
  if (reached >= aim) return { kind: 'done' };
  const levelWith = (method: string) => levelOf([...factors, { method, amr: [], at: 0 }], registry);
  const methods = usable.filter((s) => levelWith(s.method) >= aim).map((s) => s.method);
  if (methods.length > 0) return { kind: 'step', methods };
  if (reached >= need.level) return { kind: 'done' };
  if (need.enrol && !hasSecond && levelWith(ENROL_DURING_SIGN_IN) >= need.level) {
    return { kind: 'enrol', method: ENROL_DURING_SIGN_IN };
  }
  return { kind: 'unmet' };
}
