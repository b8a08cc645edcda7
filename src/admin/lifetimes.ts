// `--access-token-ttl`, `--refresh-token-ttl` and `--id-token-ttl` of `clients create|update` (the admin
// API's `access_token_ttl`, …, given as these options' text): a
// client's own token lifetimes, in seconds, at most the server's setting (which stays the ceiling:
// housekeeping and the signing keys' retirement count on it, src/oauth/grants/types.ts), or
// `default` to follow the server's again.
import type { Config } from '../config/index.ts';
import type { TokenLifetimes } from '../store/clients.ts';
import { AdminError } from './errors.ts';

export const LIFETIME_OPTIONS = {
  'access-token-ttl': { type: 'string' },
  'refresh-token-ttl': { type: 'string' },
  'id-token-ttl': { type: 'string' },
} as const;

type Ceilings = Pick<Config, 'accessTokenTtl' | 'refreshTokenTtl' | 'idTokenTtl'>;
type Values = Partial<Record<keyof typeof LIFETIME_OPTIONS, string>>;

const LIFETIMES = [
  { key: 'accessToken', option: 'access-token-ttl', setting: 'TESSERA_ACCESS_TOKEN_TTL', ceiling: 'accessTokenTtl' },
  {
    key: 'refreshToken',
    option: 'refresh-token-ttl',
    setting: 'TESSERA_REFRESH_TOKEN_TTL',
    ceiling: 'refreshTokenTtl',
  },
  { key: 'idToken', option: 'id-token-ttl', setting: 'TESSERA_ID_TOKEN_TTL', ceiling: 'idTokenTtl' },
] as const;

/** The lifetimes the options ask for, the others as they were (`current`). */
export function lifetimesFrom(values: Values, config: Ceilings, current: TokenLifetimes): TokenLifetimes {
  const lifetimes = { ...current };
  for (const { key, option, setting, ceiling } of LIFETIMES) {
    const value = values[option];
    if (value === undefined) continue;
    if (value === 'default') {
      lifetimes[key] = null;
      continue;
    }
    const seconds = /^\d{1,10}$/.test(value) ? Number(value) : NaN;
    if (!(seconds >= 1)) throw new AdminError(`--${option} must be a number of seconds, or default`);
    if (seconds > config[ceiling]) {
      throw new AdminError(
        `--${option} may be at most ${config[ceiling]} s, the server's ${setting}: a client's tokens may live ` +
          'shorter than the server allows, not longer',
      );
    }
    lifetimes[key] = seconds;
  }
  return lifetimes;
}

/**
 * For `clients show`: each lifetime as set, in seconds, or null where the client follows the server's
 * setting; in text, the server's value beside `default`.
 */
export function describeLifetimes(
  lifetimes: TokenLifetimes,
  config: Ceilings,
  text: boolean,
): Record<string, string | number | null> {
  return Object.fromEntries(
    LIFETIMES.map(({ key, option, ceiling }) => {
      const own = lifetimes[key];
      const shown = own === null ? (text ? `default (${config[ceiling]})` : null) : Math.min(own, config[ceiling]);
      return [option.replace(/-/g, '_'), shown];
    }),
  );
}
