// Tessera's configuration: one schema, each option documented beside its default. It is read from
// environment variables once at start-up (src/main.ts, src/cli), validated, and frozen.
// The settings are read by ./schema.ts, and what it cannot check alone is checked in ./parse.ts.
import type { Locale } from '../i18n/locales.ts';
import type { MfaMode } from '../authn/requirement.ts';
import type { ThrottlePolicy } from '../authn/throttle.ts';
import { parseSmtpUrl, SmtpUrlError } from './smtp-url.ts';
import { readSettingFiles } from './files.ts';
import { configSchema, FILE_SETTINGS } from './schema.ts';
import { ConfigError, FIXES, GENERATE_SECRET, parseApiScopes, parseTrustProxy, PRODUCTION_PROXIES } from './parse.ts';
import { REGISTRATION_GRANT_TYPES, secretsOf } from './parse.ts';
import { PERSON_GRANT_TYPES } from '../oauth/grant-types.ts';
import { OIDC_SCOPES } from './scopes.ts';

export { configSchema, FILE_SETTINGS, unknownSettings } from './schema.ts';
export { ConfigError, EXIT_SETTINGS } from './parse.ts';

export interface Config {
  readonly env: 'development' | 'production' | 'test';
  readonly issuer: string;
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  readonly dataDir: string;
  readonly pgPreparedStatements: boolean;
  readonly pgPoolSize: number;
  /** Fastify's trustProxy. */
  readonly trustProxy: boolean | number | string[];
  /** Undefined until resolved (main.ts generates one under dataDir in development). */
  readonly secret: string | undefined;
  /** The secrets TESSERA_SECRET replaced, newest first: they still open what they sealed. */
  readonly previousSecrets: readonly string[];
  readonly signingAlg: 'RS256' | 'ES256';
  readonly accessTokenTtl: number;
  readonly accessTokenAudience: string;
  readonly idTokenTtl: number;
  readonly codeTtl: number;
  readonly refreshTokenTtl: number;
  readonly refreshTokenAbsoluteTtl: number;
  readonly refreshTokenReuseInterval: number;
  readonly publicRefreshTokenAbsoluteTtl: number;
  readonly housekeepingInterval: number;
  readonly sessionTtl: number;
  readonly eventRetention: number;
  readonly passwordMinLength: number;
  /**
   * Second factors (src/authn/policy.ts): TESSERA_MFA, the scopes that need two factors, and whether
   * the admin console needs two (TESSERA_ADMIN_MFA).
   */
  readonly mfa: { mode: MfaMode; scopes: ReadonlySet<string>; admin: 'required' | 'off' };
  /** Throttling of sign-ins and client authentications per account or client (src/authn/throttle.ts). */
  readonly throttle: ThrottlePolicy;
  readonly dbConnectTimeout: number;
  readonly keyRotationInterval: number;
  readonly keyReloadInterval: number;
  /** Restores detected (src/restores/watch.ts): seconds between checks, and whether a new timeline fences. */
  readonly restoreWatch: { interval: number; fenceNewTimeline: boolean };
  readonly shutdownDrain: number;
  readonly shutdownTimeout: number;
  /** Every scope Tessera knows, with its consent-page description. */
  readonly scopes: ReadonlyMap<string, string>;
  readonly demo: boolean;
  readonly logLevel: string;
  /** OpenTelemetry traces: the collector's OTLP/HTTP base address (null: off) and the service's name. */
  readonly tracing: { endpoint: string | null; serviceName: string };
  /**
   * Client registration (RFC 7591) and metadata documents: who may register, the scopes and grant types
   * a client registering itself may have, the rate per address.
   */
  readonly registration: {
    mode: 'off' | 'authenticated' | 'open';
    scopes: readonly string[];
    grantTypes: readonly string[];
    perHour: number;
  };
  /** Whether an https client_id names a Client ID Metadata Document. */
  readonly clientMetadataDocuments: boolean;
  /** Whether every authorization request must be pushed first (RFC 9126, TESSERA_REQUIRE_PAR). */
  readonly requirePushedAuthorizationRequests: boolean;
  /** Whether DPoP proofs must carry a nonce of the server's (RFC 9449 §8, TESSERA_DPOP_NONCE). */
  readonly dpopNonce: boolean;
  /** Whether fetches of client-supplied URLs may reach private addresses (development and tests). */
  readonly outboundAllowPrivate: boolean;
  readonly webhookInterval: number;
  /** The most webhooks one user may have. */
  readonly webhooksPerUser: number;
  /** Upstream providers (src/upstream): the one sign-in pages send people to, and a step's time limit (ms). */
  readonly upstream: { defaultProvider: string | null; timeoutMs: number };
  /** The pages' language when the client and the browser name none we have. */
  readonly defaultLocale: Locale;
  /** The operator's brand on every page and mail: its name, logo and stylesheet files, primary colour. */
  readonly brand: { name: string; logo: string | null; color: string; stylesheet: string | null };
  readonly hstsMaxAge: number;
  readonly allowHttpRedirectUris: boolean;
  /**
   * Mail (src/mail): `smtp` sends through the server (its URL and password), `log` writes mails to the
   * log (development without TESSERA_SMTP_URL), `off` (production without it): nothing needing mail is offered.
   */
  readonly mail: {
    mode: 'smtp' | 'log' | 'off';
    smtp: { url: string; password: string | null } | null;
    from: string;
    productName: string;
    /** The brand's primary colour, for the mails' link button. */
    color: string;
    /** TESSERA_SECURITY_MAIL: whether people are told of changes to their account's security (src/mail/security.ts). */
    securityNotices: boolean;
  };
  /** Sign-up (src/account/signup.ts): off without mail; the email domains allowed (empty: any). */
  readonly signup: { mode: 'off' | 'open' | 'invite'; domains: readonly string[] };
  /** Where /metrics is served: its own listener (port, host) or the public one; and the bearer token it asks. */
  readonly metrics: { port: number | null; host: string; token: string | null };
  /** Where the admin API is served (TESSERA_ADMIN_API): the operations listener, the public one, or nowhere. */
  readonly adminApi: 'operations' | 'public' | 'off';
}

/** What the mail transport would refuse, refused at start (its message never shows the URL's password). */
function checkSmtpUrl(url: string): void {
  try {
    parseSmtpUrl(url);
  } catch (err) {
    if (err instanceof SmtpUrlError) throw new ConfigError(`TESSERA_SMTP_URL: ${err.message}`);
    throw err;
  }
}

/** The issuer when none is set (never in production): this machine, on PORT (0, any port, keeps 3000). */
function developmentIssuer(port: number | undefined): string {
  return `http://localhost:${port || 3000}`;
}

/** Validates `env` and returns the frozen configuration; throws ConfigError with every problem. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const parsed = configSchema.safeParse(readSettingFiles(env, FILE_SETTINGS, (message) => new ConfigError(message)));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = issue.path.join('.');
      return `${name}: ${issue.message}${FIXES[name] ? `; ${FIXES[name]}` : ''}`;
    });
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const production = e.NODE_ENV === 'production';
  if (production && !e.TESSERA_ISSUER) {
    throw new ConfigError(`TESSERA_ISSUER: required in production; ${FIXES.TESSERA_ISSUER}`);
  }
  const issuerSetting = e.TESSERA_ISSUER ?? developmentIssuer(e.PORT);
  const issuerUrl = new URL(issuerSetting);
  if (issuerUrl.search || issuerUrl.hash) {
    throw new ConfigError('TESSERA_ISSUER: must not have a query or fragment (RFC 8414 §2)');
  }
  const issuer = issuerSetting.replace(/\/+$/, '');
  if (production && issuerUrl.protocol !== 'https:') {
    throw new ConfigError(
      'TESSERA_ISSUER: must be https in production; set it to the https URL clients use, behind your TLS proxy',
    );
  }
  if (production && e.TESSERA_ALLOW_HTTP_REDIRECT_URIS === 'true') {
    throw new ConfigError('TESSERA_ALLOW_HTTP_REDIRECT_URIS: development only; remove it in production');
  }
  if (production && e.TESSERA_OUTBOUND_ALLOW_PRIVATE === 'true') {
    throw new ConfigError(
      'TESSERA_OUTBOUND_ALLOW_PRIVATE: development and tests only; remove it in production, where it would let ' +
        'clients and users make Tessera reach your own network',
    );
  }
  if (production && !e.TESSERA_SECRET) {
    throw new ConfigError(`TESSERA_SECRET: required in production; ${GENERATE_SECRET}, the same on every instance`);
  }
  const defaultPort = issuerUrl.port ? Number(issuerUrl.port) : issuerUrl.protocol === 'https:' ? 443 : 80;
  const scopes = new Map<string, string>(OIDC_SCOPES);
  for (const [name, description] of parseApiScopes(e.TESSERA_API_SCOPES)) scopes.set(name, description);
  const registrationScopes = [...new Set(e.TESSERA_REGISTRATION_SCOPES.split(' ').filter((s) => s !== ''))];
  // The admin scope is never had by registering (src/oauth/scopes.ts): only by the operator's mark.
  if (registrationScopes.includes('admin'))
    throw new ConfigError('TESSERA_REGISTRATION_SCOPES: admin is never granted through registration');
  const unknownScopes = registrationScopes.filter((s) => !scopes.has(s));
  if (unknownScopes.length > 0 || registrationScopes.length === 0) {
    const known = [...scopes.keys()].join(' ');
    const wrong = unknownScopes.length > 0 ? `; unknown: ${unknownScopes.join(' ')}` : '';
    throw new ConfigError(`TESSERA_REGISTRATION_SCOPES: scopes from ${known}, space-separated${wrong}`);
  }
  const registrationGrants = [...new Set(e.TESSERA_REGISTRATION_GRANT_TYPES.split(/[\s,]+/).filter((g) => g !== ''))];
  if (registrationGrants.length === 0 || registrationGrants.some((g) => !REGISTRATION_GRANT_TYPES.includes(g))) {
    throw new ConfigError(
      `TESSERA_REGISTRATION_GRANT_TYPES: grant types from ${REGISTRATION_GRANT_TYPES.join(' ')}, space-separated`,
    );
  }
  if (registrationGrants.includes('refresh_token') && !registrationGrants.some((g) => PERSON_GRANT_TYPES.includes(g))) {
    throw new ConfigError(
      `TESSERA_REGISTRATION_GRANT_TYPES: refresh_token comes with ${PERSON_GRANT_TYPES.join(' or ')}`,
    );
  }
  // A client that anyone registered, acting for itself, would answer to nobody (RFC 6749 §4.4).
  if (registrationGrants.includes('client_credentials') && e.TESSERA_REGISTRATION === 'open') {
    throw new ConfigError(
      'TESSERA_REGISTRATION_GRANT_TYPES: client_credentials cannot be given to clients anyone registers ' +
        '(TESSERA_REGISTRATION=open); register such clients with tessera clients create',
    );
  }
  const smtp = e.TESSERA_SMTP_URL ? { url: e.TESSERA_SMTP_URL, password: e.TESSERA_SMTP_PASSWORD ?? null } : null;
  if (smtp) checkSmtpUrl(smtp.url);
  const mail = {
    mode: smtp ? 'smtp' : production ? 'off' : 'log',
    smtp,
    from: e.TESSERA_MAIL_FROM ?? `no-reply@${issuerUrl.hostname}`,
    productName: e.TESSERA_MAIL_PRODUCT_NAME ?? e.TESSERA_BRAND_NAME ?? issuerUrl.host,
    color: e.TESSERA_BRAND_COLOR.toLowerCase(),
    securityNotices: e.TESSERA_SECURITY_MAIL === 'on',
  } as const;
  return Object.freeze({
    env: e.NODE_ENV,
    issuer,
    port: e.PORT ?? (issuerUrl.port ? defaultPort : 3000),
    host: e.HOST ?? (production ? '0.0.0.0' : '127.0.0.1'),
    databaseUrl: e.DATABASE_URL,
    dataDir: e.TESSERA_DATA_DIR,
    secret: e.TESSERA_SECRET,
    previousSecrets: secretsOf(e.TESSERA_SECRET_PREVIOUS ?? ''),
    signingAlg: e.TESSERA_SIGNING_ALG,
    accessTokenTtl: e.TESSERA_ACCESS_TOKEN_TTL,
    accessTokenAudience: e.TESSERA_ACCESS_TOKEN_AUDIENCE ?? issuer,
    idTokenTtl: e.TESSERA_ID_TOKEN_TTL,
    codeTtl: e.TESSERA_CODE_TTL,
    refreshTokenTtl: e.TESSERA_REFRESH_TOKEN_TTL,
    refreshTokenAbsoluteTtl: e.TESSERA_REFRESH_TOKEN_ABSOLUTE_TTL,
    refreshTokenReuseInterval: e.TESSERA_REFRESH_TOKEN_REUSE_INTERVAL,
    publicRefreshTokenAbsoluteTtl: e.TESSERA_PUBLIC_REFRESH_TOKEN_ABSOLUTE_TTL,
    housekeepingInterval: e.TESSERA_HOUSEKEEPING_INTERVAL,
    sessionTtl: e.TESSERA_SESSION_TTL,
    eventRetention: e.TESSERA_EVENT_RETENTION,
    passwordMinLength: e.TESSERA_PASSWORD_MIN_LENGTH,
    mfa: {
      mode: e.TESSERA_MFA,
      scopes: new Set(e.TESSERA_MFA_SCOPES.split(/\s+/).filter(Boolean)),
      admin: e.TESSERA_ADMIN_MFA,
    },
    throttle: {
      freeFailures: e.TESSERA_SIGNIN_FREE_FAILURES,
      lockAfter: Math.max(e.TESSERA_SIGNIN_LOCK_AFTER, e.TESSERA_SIGNIN_FREE_FAILURES),
      lockSeconds: e.TESSERA_SIGNIN_LOCK_DURATION,
      window: e.TESSERA_SIGNIN_FAILURE_WINDOW,
    },
    dbConnectTimeout: e.TESSERA_DB_CONNECT_TIMEOUT,
    keyRotationInterval: e.TESSERA_KEY_ROTATION_INTERVAL,
    keyReloadInterval: e.TESSERA_KEY_RELOAD_INTERVAL,
    restoreWatch: {
      interval: e.TESSERA_RESTORE_CHECK_INTERVAL,
      fenceNewTimeline: e.TESSERA_RESTORE_TIMELINE_FENCE === 'on',
    },
    shutdownDrain: e.TESSERA_SHUTDOWN_DRAIN ?? (production ? 5 : 0),
    shutdownTimeout: e.TESSERA_SHUTDOWN_TIMEOUT,
    scopes,
    demo: e.TESSERA_DEMO ? e.TESSERA_DEMO === 'true' : e.NODE_ENV === 'development',
    pgPreparedStatements: e.TESSERA_PG_PREPARED_STATEMENTS === 'true',
    pgPoolSize: e.TESSERA_PG_POOL_SIZE,
    trustProxy: parseTrustProxy(e.TESSERA_TRUST_PROXY ?? (production ? PRODUCTION_PROXIES : 'false')),
    logLevel: e.LOG_LEVEL,
    tracing: { endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT ?? null, serviceName: e.OTEL_SERVICE_NAME },
    registration: {
      mode: e.TESSERA_REGISTRATION,
      scopes: registrationScopes,
      grantTypes: registrationGrants,
      perHour: e.TESSERA_REGISTRATION_LIMIT,
    },
    clientMetadataDocuments: e.TESSERA_CLIENT_ID_METADATA_DOCUMENTS === 'true',
    requirePushedAuthorizationRequests: e.TESSERA_REQUIRE_PAR === 'true',
    dpopNonce: e.TESSERA_DPOP_NONCE === 'true',
    outboundAllowPrivate: e.TESSERA_OUTBOUND_ALLOW_PRIVATE === 'true',
    webhookInterval: e.TESSERA_WEBHOOK_INTERVAL,
    webhooksPerUser: e.TESSERA_WEBHOOKS_PER_USER,
    upstream: {
      defaultProvider: e.TESSERA_DEFAULT_PROVIDER ?? null,
      timeoutMs: Math.round(e.TESSERA_UPSTREAM_TIMEOUT * 1000),
    },
    defaultLocale: e.TESSERA_DEFAULT_LOCALE,
    mail,
    signup: {
      mode: mail.mode === 'off' ? 'off' : e.TESSERA_SIGNUP,
      domains: e.TESSERA_SIGNUP_DOMAINS.split(/[\s,]+/)
        .map((d) => d.toLowerCase().replace(/^@/, ''))
        .filter((d) => d !== ''),
    },
    brand: {
      name: e.TESSERA_BRAND_NAME ?? 'Tessera',
      logo: e.TESSERA_BRAND_LOGO ?? null,
      color: e.TESSERA_BRAND_COLOR.toLowerCase(),
      stylesheet: e.TESSERA_BRAND_STYLESHEET ?? null,
    },
    hstsMaxAge: e.TESSERA_HSTS_MAX_AGE,
    allowHttpRedirectUris: e.TESSERA_ALLOW_HTTP_REDIRECT_URIS === 'true',
    metrics: {
      port: e.TESSERA_METRICS_PORT ?? (production && !e.TESSERA_METRICS_TOKEN ? 9464 : null),
      host: e.TESSERA_METRICS_HOST,
      token: e.TESSERA_METRICS_TOKEN ?? null,
    },
    adminApi: e.TESSERA_ADMIN_API,
  });
}
