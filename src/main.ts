// config -> database -> app -> listen. The only module that reads process.env or exits.
import { pathToFileURL } from 'node:url';
import { pino, type Logger } from 'pino';
import { buildApp } from './app.ts';
import { ConfigError, EXIT_SETTINGS, loadConfig, unknownSettings } from './config/index.ts';
import { resolveSecret } from './config/secret.ts';
import { demoAuthorizationUrls, demoFile, readDemoCredentials, seedDemo } from './demo.ts';
import { describeDatabase, finishRestore, inheritedSocket, Lifecycle, waitForDatabase } from './lifecycle.ts';
import { DatabaseUnavailable } from './store/faults.ts';
import { startHousekeeping } from './store/housekeeping.ts';
import { localMarkFile } from './restores/local-mark.ts';
import { RestoreWatch, startRestoreWatch } from './restores/watch.ts';
import { WebhookDelivery } from './webhooks/delivery.ts';
import { startMailDelivery } from './mail/start.ts';
import { LogoutDelivery } from './logout/delivery.ts';
import { adminApiOnOperations, buildOperationsApp } from './http/operations.ts';
import { openStore, type Store } from './store/index.ts';
import { logMigrations, VERSION } from './release.ts';
import { startTracing } from './telemetry/index.ts';
import { tracedStore } from './telemetry/store.ts';
import { startKeyMaintenance } from './tokens/key-rotation.ts';
import { keyTimeline } from './tokens/key-timeline.ts';
import { KeyStore } from './tokens/keystore.ts';

/**
 * Starts the server; a failure to start is logged (fatal) and exits 1, or EXIT_SETTINGS for a setting.
 * Until the server's own logger exists, lines go to `log`: JSON lines like every other, so that a log
 * collector reads why an instance did not start as it reads everything else.
 */
export async function start(env: Record<string, string | undefined> = process.env): Promise<void> {
  const log = pino({ level: 'info' });
  try {
    await run(env, log);
  } catch (err) {
    const configuration = err instanceof ConfigError;
    log.fatal({ version: VERSION }, `cannot start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(configuration ? EXIT_SETTINGS : 1);
  }
}

async function run(env: Record<string, string | undefined>, log: Logger): Promise<void> {
  const config = loadConfig(env);
  log.level = config.logLevel;
  const secret = await resolveSecret(config);
  const database = describeDatabase(config.databaseUrl);
  // OpenTelemetry, only with OTEL_EXPORTER_OTLP_ENDPOINT: otherwise nothing of it is even loaded.
  const tracing = await startTracing(config, VERSION);
  if (tracing) log.info({ endpoint: config.tracing.endpoint }, 'sending traces (OpenTelemetry)');
  let store: Store;
  try {
    const opened = await openStore(config.databaseUrl, {
      thread: 'worker',
      pgPreparedStatements: config.pgPreparedStatements,
      pgPoolSize: config.pgPoolSize,
    });
    const system = config.databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgresql';
    store = tracing ? tracedStore(opened, tracing.spans, system) : opened;
    const report = (attempt: number, error: Error, wait: number) =>
      log.warn(
        { database, attempt, retry_in_ms: wait },
        `waiting for the database ${database} (attempt ${attempt}, again in ${wait} ms): ${error.message}`,
      );
    // Each migration this start applies is a line of the log, naming the release that applied it.
    await waitForDatabase(
      () => store.migrate().then((applied) => logMigrations(log, applied)),
      config.dbConnectTimeout,
      report,
    );
  } catch (err) {
    const cause =
      err instanceof DatabaseUnavailable
        ? `unreachable after ${config.dbConnectTimeout} s: ${err.fault.message}`
        : (err as Error).message;
    throw new Error(`the database ${database}: ${cause}`, { cause: err });
  }
  // A database restored from a marked backup, or found gone back in time (a point-in-time recovery, a
  // copy put back by hand), is fenced before anything is served (docs/backup.md). The watch never
  // fails a start; when its check could not run, finishRestore still fences a marked backup.
  const watch = new RestoreWatch(store, {
    file: localMarkFile(config.databaseUrl, config.dataDir),
    fenceNewTimeline: config.restoreWatch.fenceNewTimeline,
    log,
  });
  await watch.check();
  const restore = await finishRestore(store, { force: false, requester: { ip: null, userAgent: 'tessera server' } });
  let restoreEpoch = restore.epoch;
  const keys = await KeyStore.open(store, secret, { timeline: keyTimeline(config) });
  const seeded = config.demo ? await seedDemo(store, config) : undefined;
  const demo = config.demo ? (seeded ?? (await readDemoCredentials(store, config))) : undefined;

  const lifecycle = new Lifecycle();
  const app = await buildApp({
    config,
    store,
    keys,
    secret,
    demo,
    lifecycle,
    restoreEpoch: () => restoreEpoch,
    tracing,
  });
  if (restore.fence) {
    const takenAt = restore.fence.takenAt === null ? null : new Date(restore.fence.takenAt * 1000).toISOString();
    app.log.warn(
      { backupTakenAt: takenAt, fence: restore.fence.id },
      'restored database: every session and refresh token ended, new signing keys made; users sign in again',
    );
  }
  for (const warning of unknownSettings(env)) app.log.warn({ setting: warning.split(' ')[0] }, warning);
  // Keys rotated by `tessera keys rotate` or another instance are picked up within the reload interval.
  const keyMaintenance = startKeyMaintenance(keys, app.log);
  const housekeeping = startHousekeeping(store, config, app.log);
  // A restore under the running instance: fenced by this instance's check or another's, then taken up here.
  const restoreChecks = startRestoreWatch(watch, {
    interval: config.restoreWatch.interval,
    epoch: restoreEpoch,
    log: app.log,
    onFence: async (epoch) => {
      restoreEpoch = epoch;
      store.clearCaches();
      await keys.reload();
    },
  });
  // Webhooks: this instance's share of the outbox, delivered in the background.
  const webhooks = new WebhookDelivery(store, {
    secret,
    allowPrivate: config.outboundAllowPrivate,
    interval: config.webhookInterval,
    log: app.log,
  });
  webhooks.start();
  // Mails: this instance's share of their outbox, on the same worker (src/mail/delivery.ts).
  const mails = startMailDelivery(store, config, secret, app.log);
  // Logout tokens (Back-Channel Logout 1.0): this instance's share of their outbox, on the same worker.
  const logouts = new LogoutDelivery(store, { config, keys, interval: config.webhookInterval, log: app.log });
  logouts.start();
  // SIGTERM: not ready at once, serve on for the drain, then close the listener, finish what is in
  // flight (idle keep-alive connections close at once), close the store and exit 0; all within
  // TESSERA_SHUTDOWN_TIMEOUT, else exit 1. A second signal ends the drain early.
  let endDrain: (() => void) | undefined;
  let operations: import('fastify').FastifyInstance | undefined;
  const shutdown = async (signal: string) => {
    if (lifecycle.draining) return endDrain?.();
    lifecycle.draining = true;
    app.log.info({ signal, drain: config.shutdownDrain }, 'shutting down: draining');
    setTimeout(() => {
      app.log.error({ timeout: config.shutdownTimeout }, 'shutdown took too long; exiting');
      process.exit(1);
    }, config.shutdownTimeout * 1000).unref();
    await new Promise<void>((resolve) => {
      endDrain = resolve;
      setTimeout(resolve, config.shutdownDrain * 1000);
    });
    keyMaintenance.stop();
    housekeeping.stop();
    restoreChecks.stop();
    await app.close();
    await operations?.close();
    await webhooks.stop();
    await mails?.stop();
    await logouts.stop();
    await store.close();
    await tracing?.shutdown();
    app.log.info('shut down');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  // Under systemd's socket activation, its socket (HOST and PORT are then the socket unit's business).
  // Node's listen() takes { fd }; Fastify passes it through, and a host other than "localhost" keeps
  // Fastify from binding a second address of its own.
  const fd = inheritedSocket(env);
  await app.listen(fd === undefined ? { port: config.port, host: config.host } : ({ fd, host: '0.0.0.0' } as object));
  // The operations listener: /metrics, and the admin API unless TESSERA_ADMIN_API says otherwise.
  if (config.metrics.port !== null) {
    const adminApi = adminApiOnOperations(config) ? { config, store, keys, secret, now: keys.now } : undefined;
    operations = await buildOperationsApp({ config, registry: app.metricsRegistry, adminApi, logger: app.log });
    await operations.listen({ port: config.metrics.port, host: config.metrics.host });
  }
  const bound = app.server.address();
  const where =
    typeof bound === 'object' && bound
      ? `${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`
      : String(bound);
  // A log line like every other (JSON): the release, the address actually bound, the issuer, the database.
  app.log.info(
    { version: VERSION, address: where, issuer: config.issuer, database },
    `Tessera ${VERSION} is listening on ${where}`,
  );
  if (config.adminApi === 'operations' && config.metrics.port === null) {
    app.log.warn(
      'the admin API is off: no operations listener (TESSERA_METRICS_PORT); TESSERA_ADMIN_API=public serves it',
    );
  } else if (config.adminApi !== 'off') {
    const where =
      config.adminApi === 'public' ? 'the public listener' : `${config.metrics.host}:${config.metrics.port}`;
    app.log.info({ admin_api: config.adminApi }, `the admin API is served on ${where} at /admin/api/v1`);
  }
  if (seeded) {
    const urls = demoAuthorizationUrls(config, seeded);
    console.log(`
Demo data created (development mode; credentials kept in ${demoFile(config)}):
  user:                 ${seeded.username} / ${seeded.password}
  confidential client:  ${seeded.confidential.clientId} / ${seeded.confidential.clientSecret}
  public client (PKCE): ${seeded.public.clientId}

Open this URL in a browser, sign in as the demo user, and consent:
  ${urls.confidential}

Or the public client with PKCE (S256):
  ${urls.public}
`);
  } else if (demo) {
    const url = demoAuthorizationUrls(config, demo).confidential;
    console.log(`Demo authorization URL (user ${demo.username}, password in ${demoFile(config)}):\n  ${url}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void start();
