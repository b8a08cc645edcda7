// buildApp(deps) returns the Fastify instance; tests use it via inject or listen on port 0.
import cookie from '@fastify/cookie';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config/index.ts';
import { RelyingParty } from './authn/passkeys/relying-party.ts';
import { PendingSignInSealer } from './authn/flow.ts';
import { TotpEnrolmentSealer } from './authn/totp/enrolment.ts';
import { BrowserState } from './http/browser.ts';
import type { RouteContext } from './http/context.ts';
import { registerCors } from './http/plugins/cors.ts';
import { registerErrorHandling } from './http/plugins/errors.ts';
import { registerPages } from './http/pages.ts';
import { assetRoutes } from './http/routes/assets.ts';
import { loadBrand } from './ui/brand.ts';
import { registerMetrics } from './http/plugins/metrics.ts';
import { registerSameOrigin } from './http/plugins/same-origin.ts';
import { errorForLog, redactLogArguments, requestForLog } from './http/log-safety.ts';
import { fastifyTrustProxy, REQUEST_ID_HEADER, requestIdGenerator } from './http/request-id.ts';
import { accountRoutes } from './http/routes/account.ts';
import { adminClientRoutes } from './http/routes/admin-clients.ts';
import { adminEventRoutes } from './http/routes/admin-events.ts';
import { adminKeyRoutes } from './http/routes/admin-keys.ts';
import { adminProviderRoutes } from './http/routes/admin-providers.ts';
import { adminResourceRoutes } from './http/routes/admin-resources.ts';
import { adminWebhookRoutes } from './http/routes/admin-webhooks.ts';
import { adminUserRoutes } from './http/routes/admin-users.ts';
import { mailLinkRoutes } from './http/routes/mail-links.ts';
import { resetRoutes } from './http/routes/reset.ts';
import { mailAvailable } from './mail/compose.ts';
import { authorizeRoutes } from './http/routes/authorize.ts';
import { logoutRoutes } from './http/routes/logout.ts';
import { passkeyRoutes } from './http/routes/passkeys.ts';
import { secondFactorRoutes } from './http/routes/second-factors.ts';
import { interactionRoutes } from './http/routes/interaction.ts';
import { loginRoutes } from './http/routes/login.ts';
import { metadataRoutes } from './http/routes/metadata.ts';
import { registrationRoutes } from './http/routes/register.ts';
import { webhooksApiRoutes } from './http/routes/webhooks-api.ts';
import { revocationRoutes } from './http/routes/revocation.ts';
import { tokenRoutes } from './http/routes/token.ts';
import { parRoutes } from './http/routes/par.ts';
import { deviceRoutes } from './http/routes/device.ts';
import { userinfoRoutes } from './http/routes/userinfo.ts';
import { registerAdminApi } from './http/admin-api/index.ts';
import { ClientAuthThrottle } from './oauth/client-auth/throttle.ts';
import { ClientAssertions } from './oauth/client-auth/assertion.ts';
import { ClientKeySets } from './oauth/client-auth/keys.ts';
import { RequestObjects } from './oauth/authorize/request-object.ts';
import { CodeSealer } from './oauth/codes.ts';
import { InteractionSealer } from './oauth/interaction.ts';
import { ClientDocumentError, ClientDocuments, isClientIdUrl } from './oauth/registration/documents.ts';
import type { Store } from './store/store.ts';
import type { RestoreEpoch } from './tokens/epoch.ts';
import type { KeyStore } from './tokens/keystore.ts';
import { RefreshTokens } from './tokens/refresh.ts';
import type { Secrets } from './tokens/secrets.ts';
import { DpopProofs } from './oauth/dpop.ts';
import type { DemoCredentials } from './demo.ts';
import { demoRoutes } from './http/routes/demo.ts';
import { Lifecycle } from './lifecycle.ts';
import { upstreamMetrics } from './http/plugins/upstream-metrics.ts';
import { alertingMetrics } from './http/plugins/alerting-metrics.ts';
import { upstreamRoutes } from './http/routes/upstream.ts';
import { accountUpstreamRoutes } from './http/routes/account-upstream.ts';
import { PendingLinkSealer, UpstreamFlowSealer } from './authn/upstream/flow.ts';
import { OidcConfigurations } from './upstream/oidc.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The Prometheus registry, for a metrics listener of its own (src/main.ts). */
    metricsRegistry: import('prom-client').Registry;
  }
}

export interface AppDeps {
  config: Config;
  store: Store;
  keys: KeyStore;
  /** The resolved TESSERA_SECRET, or it and TESSERA_SECRET_PREVIOUS, newest first. */
  secret: Secrets;
  /**
   * The database's latest restore fence (src/store/restores.ts): codes and passkey challenges sealed
   * before it do not open. A function when the instance's restore watch may change it (src/main.ts).
   */
  restoreEpoch?: RestoreEpoch;
  /** Epoch seconds; tests inject a clock. */
  now?: () => number;
  logger?: boolean;
  /** Demo credentials (development): enables the /demo/callback page that exchanges the code. */
  demo?: DemoCredentials | undefined;
  /** Where the log goes (tests read it); standard output by default. */
  logStream?: { write(line: string): void };
  /** Draining after SIGTERM (src/main.ts): /readyz answers 503 and answers close their connection. */
  lifecycle?: Lifecycle;
  /** OpenTelemetry traces (src/telemetry), when OTEL_EXPORTER_OTLP_ENDPOINT turns them on. */
  tracing?: import('./telemetry/spans.ts').Tracing | undefined;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger:
      deps.logger === false
        ? false
        : {
            level: deps.config.logLevel,
            // Never log credentials: no headers or bodies, and query values that are credentials
            // (an ID token hint, a code, a sealed request) replaced by name (src/http/log-safety.ts),
            // in the request's URL and in any message, field or error that quotes one.
            serializers: { req: requestForLog, err: errorForLog },
            hooks: {
              logMethod(args, method) {
                method.apply(this, redactLogArguments(args) as Parameters<typeof method>);
              },
            },
            ...(deps.logStream ? { stream: deps.logStream } : {}),
          },
    bodyLimit: 64 * 1024,
    // A trusted proxy's X-Request-Id, else a random UUID (src/http/request-id.ts); sent back below.
    genReqId: requestIdGenerator(deps.config.trustProxy),
    // A request received while closing is answered, not refused: the drain's last requests still
    // count (src/lifecycle.ts). Fastify marks those answers Connection: close.
    return503OnClosing: false,
    trustProxy: fastifyTrustProxy(deps.config.trustProxy),
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, new URLSearchParams(body as string));
  });
  await app.register(cookie);
  // Before any route: the request spans wrap the handlers as the routes are added. Loaded only then.
  if (deps.tracing) (await import('./http/plugins/tracing.ts')).traceRequests(app, deps.tracing);
  const lifecycle = deps.lifecycle ?? new Lifecycle();
  // Every answer names its request, errors and 404s included (one hook for both jobs). While
  // draining, every answer ends its keep-alive connection, so the next request opens a new one
  // (through the load balancer, to an instance that is ready).
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    if (lifecycle.draining) reply.header('connection', 'close');
    done(null, payload);
  });
  registerErrorHandling(app);
  const issuerUrl = new URL(deps.config.issuer);
  const { brand, assets } = loadBrand(deps.config.brand);
  assetRoutes(app, assets);
  registerPages(app, {
    brand,
    defaultLocale: deps.config.defaultLocale,
    origin: issuerUrl.origin,
    secure: issuerUrl.protocol === 'https:',
  });
  registerCors(app);
  registerSameOrigin(app, deps.config.issuer);
  // HSTS (RFC 6797) on every answer of an https issuer: browsers then never try plain http, where a
  // cookie could be planted or read.
  if (deps.config.issuer.startsWith('https:') && deps.config.hstsMaxAge > 0) {
    const hsts = `max-age=${deps.config.hstsMaxAge}`;
    app.addHook('onSend', (_request, reply, payload, done) => {
      reply.header('strict-transport-security', hsts);
      done(null, payload);
    });
  }
  const metricsOptions = { onPublicListener: deps.config.metrics.port === null, token: deps.config.metrics.token };
  const { security, registry } = registerMetrics(app, deps.store, lifecycle, deps.keys, metricsOptions);
  app.decorate('metricsRegistry', registry);
  const now = deps.now ?? (() => Math.floor(Date.now() / 1000));
  alertingMetrics(registry, deps.store, { throttle: deps.config.throttle, now });

  if (deps.config.clientMetadataDocuments) {
    const documents = new ClientDocuments({
      scopes: deps.config.registration.scopes,
      grantTypes: deps.config.registration.grantTypes,
      allowPrivate: deps.config.outboundAllowPrivate,
      log: (fields, message) => app.log.warn(fields, message),
    });
    deps.store.resolveClientUrlsWith((clientId) =>
      isClientIdUrl(clientId)
        ? documents.get(clientId)
        : Promise.reject(new ClientDocumentError('the client is unknown')),
    );
  }

  // The clients' public keys (jwks_uri fetched and kept), for their assertions and request objects.
  const clientKeys = new ClientKeySets({ allowPrivate: deps.config.outboundAllowPrivate });
  const upstreamDeps = {
    issuer: deps.config.issuer,
    secret: deps.secret,
    network: {
      allowPrivate: deps.config.outboundAllowPrivate,
      timeoutMs: deps.config.upstream.timeoutMs,
      observer: upstreamMetrics(registry),
    },
    oidc: new OidcConfigurations(),
  };
  const ctx: RouteContext = {
    config: deps.config,
    store: deps.store,
    keys: deps.keys,
    sealer: new InteractionSealer(deps.secret),
    pending: new PendingSignInSealer(deps.secret),
    codes: new CodeSealer(deps.secret, deps.restoreEpoch),
    relyingParty: new RelyingParty(deps.config.issuer, deps.secret, deps.restoreEpoch),
    secondFactors: {
      store: deps.store,
      secrets: deps.secret,
      enrolments: new TotpEnrolmentSealer(deps.secret),
      issuerName: new URL(deps.config.issuer).host,
    },
    refreshTokens: new RefreshTokens(deps.secret),
    browser: new BrowserState({
      secret: deps.secret,
      secure: deps.config.issuer.startsWith('https:'),
      store: deps.store,
      sessionTtl: deps.config.sessionTtl,
    }),
    now,
    lifecycle,
    security,
    clientThrottle: new ClientAuthThrottle(deps.store, deps.config.throttle, security),
    clientAssertions: new ClientAssertions({
      issuer: deps.config.issuer,
      store: deps.store,
      secrets: deps.secret,
      keys: clientKeys,
    }),
    requestObjects: new RequestObjects(deps.config.issuer, clientKeys),
    dpop: new DpopProofs({
      issuer: deps.config.issuer,
      store: deps.store,
      secrets: deps.secret,
      requireNonce: deps.config.dpopNonce,
    }),
    mail: { secret: deps.secret, mail: deps.config.mail, issuer: deps.config.issuer },
    upstream: {
      deps: upstreamDeps,
      flows: new UpstreamFlowSealer(deps.secret),
      links: new PendingLinkSealer(deps.secret),
    },
    issuers: { upstream: upstreamDeps, keys: clientKeys },
  };
  authorizeRoutes(app, ctx);
  loginRoutes(app, ctx);
  interactionRoutes(app, ctx);
  tokenRoutes(app, ctx);
  parRoutes(app, ctx);
  deviceRoutes(app, ctx);
  revocationRoutes(app, ctx);
  logoutRoutes(app, ctx, deps.secret);
  accountRoutes(app, ctx);
  adminUserRoutes(app, ctx);
  adminEventRoutes(app, ctx);
  adminClientRoutes(app, ctx);
  adminWebhookRoutes(app, ctx);
  adminResourceRoutes(app, ctx);
  adminProviderRoutes(app, ctx);
  adminKeyRoutes(app, ctx);
  if (mailAvailable(ctx.mail)) {
    resetRoutes(app, ctx);
    mailLinkRoutes(app, ctx);
  }
  passkeyRoutes(app, ctx);
  secondFactorRoutes(app, ctx);
  upstreamRoutes(app, ctx);
  accountUpstreamRoutes(app, ctx);
  userinfoRoutes(app, ctx);
  metadataRoutes(app, ctx);
  registrationRoutes(app, ctx);
  webhooksApiRoutes(app, ctx, deps.secret);
  if (deps.demo) demoRoutes(app, ctx, deps.demo);
  // The admin API on the public listener only when the operator says so (else src/http/operations.ts).
  if (deps.config.adminApi === 'public') await registerAdminApi(app, { ...deps, now });
  return app;
}
