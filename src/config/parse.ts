// Parsing and checking the settings that the schema (./schema.ts) cannot check alone.
import { DEVICE_CODE_GRANT } from '../oauth/grant-types.ts';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * The server's exit status for a ConfigError: EX_CONFIG (sysexits.h), a setting is wrong and starting
 * again will not help. The systemd unit does not restart on it (`RestartPreventExitStatus=78`,
 * docs/deployment.md); every other failure to start exits 1.
 */
export const EXIT_SETTINGS = 78;

export function parseApiScopes(value: string): Map<string, string> {
  const scopes = new Map<string, string>();
  for (const entry of value.split(';')) {
    if (entry.trim() === '') continue;
    const eq = entry.indexOf('=');
    const name = (eq === -1 ? entry : entry.slice(0, eq)).trim();
    const description = eq === -1 ? name : entry.slice(eq + 1).trim();
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(name)) {
      throw new ConfigError(`TESSERA_API_SCOPES: "${name}" is not a valid scope token (RFC 6749 §3.3)`);
    }
    scopes.set(name, description);
  }
  return scopes;
}

/** Only a proxy on the same machine, unless the operator names others (docs/deployment.md). */
export const PRODUCTION_PROXIES = 'loopback';
export const REGISTRATION_GRANT_TYPES = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
  DEVICE_CODE_GRANT,
];

export function parseTrustProxy(value: string): boolean | number | string[] {
  if (value === 'true' || value === 'false') return value === 'true';
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    if (!/^(loopback|linklocal|uniquelocal|[0-9a-fA-F.:]+(\/\d{1,3})?)$/.test(entry)) {
      throw new ConfigError(`TESSERA_TRUST_PROXY: "${entry}" is not an address, a CIDR range or a preset`);
    }
  }
  return entries;
}

/** How to fix a setting's value, said after what is wrong with it. */
export const GENERATE_SECRET = 'generate one with: openssl rand -base64 48';
export const FIXES: Record<string, string> = {
  TESSERA_SECRET: GENERATE_SECRET,
  TESSERA_ISSUER: 'set it to the https URL clients use, e.g. https://id.example.com',
  DATABASE_URL: 'use sqlite:<path> or postgres://user:password@host:5432/database',
  PORT: 'a port number from 1 to 65535',
  TESSERA_SIGNING_ALG: 'RS256 or ES256',
};

export function secretsOf(list: string): string[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
