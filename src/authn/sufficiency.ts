// Whether a session is good enough for a request: the one answer the authorization endpoint, the
// consent page and the account page all ask for (node-oidc-provider's login prompt checks:
// no_session, max_age, essential_acrs).
import type { User } from '../store/users.ts';
import { lastFactorAt, levelOf } from './factors.ts';
import { Level } from './levels.ts';
import type { Requirement } from './requirement.ts';
import type { BrowserSession } from './session.ts';

/**
 * What a session lacks: none (or a deleted or disabled user); a sign-in this request demands
 * (prompt=login); a factor recent enough (max_age, counted from the last factor); or the level or
 * steps asked for, which the session can step up to.
 */
export type Shortfall = 'no-session' | 'login' | 'max-age' | 'level';

/** Undefined when `session`, of `user`, satisfies `need`; else what it lacks, the first found. */
export function shortfall(
  session: BrowserSession | undefined,
  user: User | undefined,
  need: Requirement,
): Shortfall | undefined {
  if (!session || !user || user.disabled || user.id !== session.userId) return 'no-session';
  if (need.forceLogin) return 'login';
  // The checks that cost something only when the request asks for them (max_age, a level or steps):
  // a returning user's plain request is answered by any sign-in, and any factor reaches `sfa`.
  if (need.freshSince > 0 && lastFactorAt(session.factors) < need.freshSince) return 'max-age';
  if (need.level <= Level.sfa && need.methods.length === 0 && session.factors.length > 0) return undefined;
  const methods = new Set(session.factors.map((f) => f.method));
  if (levelOf(session.factors) < need.level || need.methods.some((m) => !methods.has(m))) return 'level';
  return undefined;
}
