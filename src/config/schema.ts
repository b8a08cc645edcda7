// The settings Tessera reads from the environment: one zod schema, each option documented beside its
// default (docs/configuration.md's table is checked against it). ./index.ts turns them into a Config.
// What people see and receive (providers, languages, the brand, mail, sign-up) is ./schema-people.ts.
import { z } from 'zod';
import { nearest } from './nearest.ts';
import { secretsOf } from './parse.ts';
import { DEFAULT_API_SCOPES } from './scopes.ts';
import { PEOPLE_SETTINGS } from './schema-people.ts';
import { seconds, secret } from './setting-kinds.ts';

export const configSchema = z.object({
  /** NODE_ENV: `production` turns off demo data and requires an https issuer and TESSERA_SECRET. */
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /**
   * TESSERA_ISSUER: the issuer identifier and base address of every endpoint. Required in production;
   * elsewhere `http://localhost:` PORT (3000 without it), so that PORT alone moves a development server.
   */
  TESSERA_ISSUER: z.url().optional(),
  /** PORT: the port to listen on; defaults to the issuer's port (or 3000). */
  PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** HOST: the address to listen on; 127.0.0.1 in development, 0.0.0.0 in production. */
  HOST: z.string().min(1).optional(),
  /**
   * TESSERA_TRUST_PROXY: which peers' X-Forwarded-For/-Proto/-Host to believe (the client's address
   * for logs and throttling, https behind a TLS proxy): `false`, `true` (every peer: only when nothing
   * but the proxy can reach the instance), a number of proxy hops, or addresses, CIDRs and the presets
   * `loopback`, `linklocal`, `uniquelocal`, comma-separated. Default: `loopback` in production (a proxy
   * on the same machine), `false` otherwise; a proxy elsewhere is named by its address or range.
   */
  TESSERA_TRUST_PROXY: z.string().min(1).optional(),
  /** DATABASE_URL: `sqlite:<path>` (default, WAL mode) or `postgres://…` (its password, if any, in it). */
  DATABASE_URL: secret(z.string().min(1).default('sqlite:./data/tessera.db')),
  /**
   * TESSERA_PG_PREPARED_STATEMENTS: name PostgreSQL statements so each is parsed once per connection;
   * `false` behind a pooler that cannot keep them (PgBouncer in transaction mode before 1.21).
   */
  TESSERA_PG_PREPARED_STATEMENTS: z.enum(['true', 'false']).default('true'),
  /**
   * TESSERA_PG_POOL_SIZE: PostgreSQL connections per instance at most. Instances × this must stay
   * below the server's max_connections (100 by default), with room for the CLI and maintenance.
   */
  TESSERA_PG_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(10),
  /** TESSERA_DATA_DIR: where development mode keeps its generated secret. */
  TESSERA_DATA_DIR: z.string().min(1).default('./data'),
  /** TESSERA_SECRET: encrypts private signing keys and signs cookies; ≥ 32 characters. */
  TESSERA_SECRET: secret(z.string().min(32).optional()),
  /**
   * TESSERA_SECRET_PREVIOUS: the secrets TESSERA_SECRET replaced, comma-separated, newest first. They
   * still open and decrypt what they sealed and encrypted (nothing new is made under them) until
   * `tessera secret reencrypt` has moved the stored values and what they sealed has expired.
   */
  TESSERA_SECRET_PREVIOUS: secret(
    z
      .string()
      .optional()
      .refine((list) => !list || secretsOf(list).every((s) => s.length >= 32), {
        message: 'each secret must be at least 32 characters, comma-separated',
      }),
  ),
  /** TESSERA_SIGNING_ALG: default JWS algorithm for access and ID tokens (per client overridable). */
  TESSERA_SIGNING_ALG: z.enum(['RS256', 'ES256']).default('RS256'),
  /** TESSERA_ACCESS_TOKEN_TTL: access token lifetime in seconds (`expires_in`). */
  TESSERA_ACCESS_TOKEN_TTL: seconds(86_400),
  /** TESSERA_ACCESS_TOKEN_AUDIENCE: the `aud` of access tokens (RFC 9068 §3); defaults to the issuer. */
  TESSERA_ACCESS_TOKEN_AUDIENCE: z.string().min(1).optional(),
  /** TESSERA_ID_TOKEN_TTL: ID token lifetime in seconds. */
  TESSERA_ID_TOKEN_TTL: seconds(3_600),
  /** TESSERA_CODE_TTL: authorization code lifetime in seconds. */
  TESSERA_CODE_TTL: seconds(60),
  /** TESSERA_REFRESH_TOKEN_TTL: refresh token lifetime in seconds (30 days). */
  TESSERA_REFRESH_TOKEN_TTL: seconds(2_592_000),
  /** TESSERA_REFRESH_TOKEN_ABSOLUTE_TTL: no token of a refresh family outlives its grant by more (90 days). */
  TESSERA_REFRESH_TOKEN_ABSOLUTE_TTL: seconds(7_776_000),
  /**
   * TESSERA_PUBLIC_REFRESH_TOKEN_ABSOLUTE_TTL: public clients' (browser and native apps') refresh
   * tokens, still rotated with reuse detection, end this long after the sign-in (1 day), as
   * draft-ietf-oauth-browser-based-apps asks of tokens held in a browser.
   */
  TESSERA_PUBLIC_REFRESH_TOKEN_ABSOLUTE_TTL: seconds(86_400),
  /**
   * TESSERA_REFRESH_TOKEN_REUSE_INTERVAL: seconds a rotated refresh token may still be used (concurrent
   * refreshes) without revoking its family.
   */
  TESSERA_REFRESH_TOKEN_REUSE_INTERVAL: z.coerce.number().int().min(0).default(0),
  /**
   * TESSERA_DB_CONNECT_TIMEOUT: at start, seconds to keep trying a database that cannot be reached
   * (backoff 0.5 s doubling to 5 s, each attempt logged) before giving up.
   */
  TESSERA_DB_CONNECT_TIMEOUT: z.coerce.number().int().min(0).default(60),
  /**
   * TESSERA_SHUTDOWN_DRAIN: seconds between SIGTERM and closing the listener, serving on while /readyz
   * answers 503, so that load balancers stop sending first. Default 5 in production, 0 otherwise.
   */
  TESSERA_SHUTDOWN_DRAIN: z.coerce.number().min(0).optional(),
  /** TESSERA_SHUTDOWN_TIMEOUT: seconds a shutdown may take in all; then the process exits with 1. */
  TESSERA_SHUTDOWN_TIMEOUT: seconds(30),
  /**
   * TESSERA_KEY_ROTATION_INTERVAL: seconds between automatic signing-key rotations (90 days); 0 turns
   * them off. A rotation stages the new key (src/tokens/key-timeline.ts); one instance makes it.
   */
  TESSERA_KEY_ROTATION_INTERVAL: z.coerce.number().int().min(0).default(7_776_000),
  /** TESSERA_KEY_RELOAD_INTERVAL: seconds between an instance's re-reads of the signing keys. */
  TESSERA_KEY_RELOAD_INTERVAL: seconds(60),
  /**
   * TESSERA_RESTORE_CHECK_INTERVAL: seconds between an instance's checks that the database has not gone
   * back in time under it (a restore made without `tessera restore-finish`, docs/backup.md).
   */
  TESSERA_RESTORE_CHECK_INTERVAL: seconds(60),
  /**
   * TESSERA_RESTORE_TIMELINE_FENCE: `on` fences a PostgreSQL database found on a new timeline (a
   * point-in-time recovery, or a standby promoted); `off` where failovers promote standbys.
   */
  TESSERA_RESTORE_TIMELINE_FENCE: z.enum(['on', 'off']).default('on'),
  /** TESSERA_HOUSEKEEPING_INTERVAL: seconds between removals of expired sessions, grants and revocation records. */
  TESSERA_HOUSEKEEPING_INTERVAL: seconds(60),
  /** TESSERA_EVENT_RETENTION: seconds the audit trail's events are kept (90 days), then housekeeping removes them. */
  TESSERA_EVENT_RETENTION: seconds(7_776_000),
  /**
   * TESSERA_SIGNIN_FREE_FAILURES: failed sign-ins (or client authentications) of one account (client)
   * before each attempt must wait a delay, doubling from 1 s; a source address gets ten times as many.
   */
  TESSERA_SIGNIN_FREE_FAILURES: z.coerce.number().int().min(1).default(5),
  /** TESSERA_SIGNIN_LOCK_AFTER: failures after which the account (client) is locked; an address, ten times as many. */
  TESSERA_SIGNIN_LOCK_AFTER: z.coerce.number().int().min(1).max(100).default(20),
  /** TESSERA_SIGNIN_LOCK_DURATION: seconds a lock lasts (and the longest delay). */
  TESSERA_SIGNIN_LOCK_DURATION: seconds(900),
  /** TESSERA_SIGNIN_FAILURE_WINDOW: seconds without a failure after which the count starts again (12 h). */
  TESSERA_SIGNIN_FAILURE_WINDOW: seconds(43_200),
  /**
   * TESSERA_PASSWORD_MIN_LENGTH: the shortest new password, in characters (Unicode code points). 8,
   * with the list of leaked passwords and throttled sign-ins; NIST SP 800-63B-4 asks 15 where a
   * password alone signs in.
   */
  TESSERA_PASSWORD_MIN_LENGTH: z.coerce.number().int().min(1).max(64).default(8),
  /**
   * TESSERA_MFA: second factors. `optional`: users may enrol an authenticator app (and get recovery
   * codes), and are asked for their second factor after the first; `required`: a user without one
   * enrols one at the next sign-in before going on; `off`: authenticator apps and recovery codes are
   * neither offered nor asked for (passkeys stay).
   */
  TESSERA_MFA: z.enum(['off', 'optional', 'required']).default('optional'),
  /**
   * TESSERA_MFA_SCOPES: space-separated scopes whose requests need two factors (a user without a
   * second factor enrols one).
   */
  TESSERA_MFA_SCOPES: z.string().default(''),
  /**
   * TESSERA_ADMIN_MFA: the admin console (/admin). `required`: two factors (an admin without a second
   * factor enrols one, an admin session signed in with a password alone steps up); `off`: the sign-in
   * the account page needs (TESSERA_MFA's) will do.
   */
  TESSERA_ADMIN_MFA: z.enum(['required', 'off']).default('required'),
  /** TESSERA_SESSION_TTL: login session lifetime in seconds. */
  TESSERA_SESSION_TTL: seconds(86_400),
  /** TESSERA_API_SCOPES: `name=description;…` API scopes offered besides openid, profile, email. */
  TESSERA_API_SCOPES: z.string().default(DEFAULT_API_SCOPES),
  /**
   * TESSERA_REGISTRATION: who may register clients at /oauth2/register (RFC 7591): `off`;
   * `authenticated`, with a Tessera access token carrying the `apps` scope, the client belonging to
   * its user; `open`, anyone (AI agents), limited per source address.
   */
  TESSERA_REGISTRATION: z.enum(['off', 'authenticated', 'open']).default('authenticated'),
  /**
   * TESSERA_REGISTRATION_SCOPES: the scopes a client that registers itself (RFC 7591, or a client ID
   * metadata document) may have, and has when it names none. API scopes only when the operator says so.
   */
  TESSERA_REGISTRATION_SCOPES: z.string().default('openid profile email'),
  /**
   * TESSERA_REGISTRATION_GRANT_TYPES: the grant types a client that registers itself may have:
   * `authorization_code` and `refresh_token`; the device grant
   * (`urn:ietf:params:oauth:grant-type:device_code`) where agents in a terminal register themselves;
   * `client_credentials` only with TESSERA_REGISTRATION `authenticated` (never to anyone at all: a
   * client acting for itself answers to no user).
   */
  TESSERA_REGISTRATION_GRANT_TYPES: z.string().default('authorization_code refresh_token'),
  /** TESSERA_REGISTRATION_LIMIT: registrations per source address per hour. */
  TESSERA_REGISTRATION_LIMIT: z.coerce.number().int().min(1).default(20),
  /**
   * TESSERA_CLIENT_ID_METADATA_DOCUMENTS: accept an https client_id naming the client's metadata
   * document (draft-ietf-oauth-client-id-metadata-document), fetched and cached.
   */
  TESSERA_CLIENT_ID_METADATA_DOCUMENTS: z.enum(['true', 'false']).default('true'),
  /**
   * TESSERA_REQUIRE_PAR: every authorization request must be pushed first (RFC 9126 §5,
   * `require_pushed_authorization_requests`); a plain one is invalid_request. Per client:
   * `tessera clients create|update --require-pushed-authorization-requests`.
   */
  TESSERA_REQUIRE_PAR: z.enum(['true', 'false']).default('false'),
  /**
   * TESSERA_DPOP_NONCE: every DPoP proof at the token endpoint and userinfo must carry a nonce of the
   * server's (RFC 9449 §8, §9): one without is refused with `use_dpop_nonce` and a `DPoP-Nonce`
   * header, which client libraries retry with. Nonces last 5 to 10 minutes and any instance accepts
   * them (made from TESSERA_SECRET).
   */
  TESSERA_DPOP_NONCE: z.enum(['true', 'false']).default('false'),
  /**
   * TESSERA_OUTBOUND_ALLOW_PRIVATE: let fetches of URLs that clients supply (metadata documents),
   * webhooks and upstream providers reach loopback, private and link-local addresses, over plain http
   * too. For development and tests only (a provider inside the network: --allow-private-network).
   */
  TESSERA_OUTBOUND_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false'),
  /**
   * TESSERA_ALLOW_HTTP_REDIRECT_URIS: let `tessera clients create` register plain http redirect URIs
   * to hosts other than loopback. Development only: refused in production.
   */
  TESSERA_ALLOW_HTTP_REDIRECT_URIS: z.enum(['true', 'false']).default('false'),
  /**
   * TESSERA_METRICS_PORT: serve /metrics on a listener of its own at TESSERA_METRICS_HOST on this port,
   * not on the public one. Default 9464 in production unless TESSERA_METRICS_TOKEN is set.
   */
  TESSERA_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** TESSERA_METRICS_HOST: the metrics listener's address. */
  TESSERA_METRICS_HOST: z.string().default('127.0.0.1'),
  /** TESSERA_METRICS_TOKEN: /metrics answers only `Authorization: Bearer <this>` (at least 16 characters). */
  TESSERA_METRICS_TOKEN: secret(z.string().min(16).optional()),
  /**
   * TESSERA_ADMIN_API: where the admin API (/admin/api/v1, docs/admin-api.md) is served: `operations`
   * on the listener of /metrics (TESSERA_METRICS_PORT; none without it, said in the log), `public` on
   * the public listener, or `off`.
   */
  TESSERA_ADMIN_API: z.enum(['operations', 'public', 'off']).default('operations'),
  /** TESSERA_HSTS_MAX_AGE: with an https issuer, every answer's Strict-Transport-Security max-age; 0 sends none. */
  TESSERA_HSTS_MAX_AGE: z.coerce.number().int().min(0).default(31_536_000),
  ...PEOPLE_SETTINGS,
  /** LOG_LEVEL: pino log level of the HTTP server. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * OTEL_EXPORTER_OTLP_ENDPOINT: an OpenTelemetry collector's OTLP/HTTP base address; traces go to
   * its /v1/traces (src/telemetry). Unset: no tracing, and nothing of OpenTelemetry is loaded.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  /** OTEL_SERVICE_NAME: the traces' `service.name`. */
  OTEL_SERVICE_NAME: z.string().min(1).default('tessera'),
});

/** The settings that may be given as a file's contents, NAME_FILE (`secret(…)` above). */
export const FILE_SETTINGS: readonly string[] = Object.entries(configSchema.shape)
  .filter(([, schema]) => (schema.meta() as { file?: boolean } | undefined)?.file === true)
  .map(([name]) => name);

/**
 * Warnings for `TESSERA_*` variables Tessera does not know (a misspelled setting is otherwise ignored
 * silently), each naming the closest known setting.
 */
export function unknownSettings(env: Record<string, string | undefined>): string[] {
  const known = [...Object.keys(configSchema.shape), ...FILE_SETTINGS.map((name) => `${name}_FILE`)];
  return Object.keys(env)
    .filter((name) => name.startsWith('TESSERA_') && !known.includes(name))
    .sort()
    .map((name) => {
      const setting = name.replace(/_FILE$/, '');
      if (setting !== name && setting in configSchema.shape)
        return `${name} is ignored: ${setting} holds no secret; only ${FILE_SETTINGS.join(', ')} are read from files`;
      const bare = name.slice('TESSERA_'.length);
      const meant = known.includes(bare) ? bare : nearest(name, known);
      const hint = meant ? `; did you mean ${meant}?` : '';
      return `${name} is not a setting Tessera knows, and is ignored${hint}`;
    });
}
