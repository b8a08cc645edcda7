// config -> database -> app -> listen. The only module that reads process.env or exits.
import { pathToFileURL } from 'node:url';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config/index.ts';
import { resolveSecret } from './config/secret.ts';
import { demoAuthorizationUrls, readDemoCredentials, seedDemo } from './demo.ts';
import { startHousekeeping } from './store/housekeeping.ts';
import { openStore } from './store/index.ts';
import { KeyStore } from './tokens/keystore.ts';

export async function start(env: Record<string, string | undefined> = process.env): Promise<void> {
  let config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`tessera: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const secret = await resolveSecret(config);
  const store = await openStore(config.databaseUrl, {
    thread: 'worker',
    pgPreparedStatements: config.pgPreparedStatements,
    pgPoolSize: config.pgPoolSize,
  });
  await store.migrate();
  const keys = await KeyStore.open(store, secret);
  const seeded = config.demo ? await seedDemo(store, config) : undefined;
  const demo = config.demo ? (seeded ?? (await readDemoCredentials(config))) : undefined;

  const app = await buildApp({ config, store, keys, secret, demo });
  // Keys rotated by `tessera keys rotate` (or another instance) are picked up within a minute.
  const keyReload = setInterval(() => {
    keys.reload().catch((err: unknown) => app.log.error({ err }, 'reloading signing keys failed'));
  }, 60_000);
  keyReload.unref();
  const housekeeping = startHousekeeping(store, config, app.log);
  const shutdown = async (signal: string) => {
    app.log.info({ signal }, 'shutting down');
    clearInterval(keyReload);
    housekeeping.stop();
    await app.close();
    await store.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  await app.listen({ port: config.port, host: config.host });
  console.log(
    `Tessera is listening: ${config.issuer} (database: ${config.databaseUrl.replace(/\/\/[^@/]*@/, '//***@')})`,
  );
  if (seeded) {
    const urls = demoAuthorizationUrls(config, seeded);
    console.log(`
Demo data created (development mode; credentials kept in ${config.dataDir}/demo.json):
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
    console.log(`Demo authorization URL (user ${demo.username}, password in ${config.dataDir}/demo.json):\n  ${url}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  start().catch((err: unknown) => {
    console.error('tessera: failed to start:', err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
