// `tessera check`: whether a deployment is fit to serve, one verdict per part, for a person or a
// script, and never a change: the settings, the database (reachable, and migrated by this release),
// the SMTP server (when mail is configured: connected to, greeted, TLS and credentials, no mail
// sent), and the signing keys (each one still in use opens under TESSERA_SECRET or a previous one).
// A part that cannot be checked because an earlier one failed says so, and fails.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPrivateKey } from 'node:crypto';
import { type Config, ConfigError, loadConfig } from '../config/index.ts';
import { describeDatabase } from '../lifecycle.ts';
import { smtpTransport } from '../mail/transport.ts';
import { openStore } from '../store/index.ts';
import type { Store } from '../store/store.ts';
import { keyTimeline, keyStates } from '../tokens/key-timeline.ts';
import { openPrivateJwk, SIGNING_ALGS } from '../tokens/keystore.ts';

export type CheckName = 'settings' | 'database' | 'migrations' | 'mail' | 'signing keys';

export interface Verdict {
  check: CheckName;
  /** `skip`: nothing to check (no SMTP server configured). Only `fail` fails the whole. */
  status: 'ok' | 'fail' | 'skip';
  detail: string;
}

const ok = (check: CheckName, detail: string): Verdict => ({ check, status: 'ok', detail });
const fail = (check: CheckName, detail: string): Verdict => ({ check, status: 'fail', detail });
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export interface CheckOptions {
  /** Milliseconds the SMTP server may take at each step (10 s). */
  smtpTimeoutMs?: number;
  /** Extra certificate authorities for the SMTP server (tests). */
  smtpCa?: string;
  now?: number;
}

export async function checkDeployment(
  env: Record<string, string | undefined>,
  options: CheckOptions = {},
): Promise<Verdict[]> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const skipped = (['database', 'migrations', 'mail', 'signing keys'] as const).map((check) =>
      fail(check, 'not checked: the settings are wrong'),
    );
    // One line: each setting's problem after the other.
    const problems = err.message.split('\n').map((line) => line.trim());
    return [fail('settings', `${problems[0]} ${problems.slice(1).join('; ')}`), ...skipped];
  }
  const verdicts = [ok('settings', `NODE_ENV=${env.NODE_ENV ?? 'development'}, issuer ${config.issuer}`)];
  const mail = await checkMail(config, options);
  const store = await openExisting(config);
  if ('problem' in store) {
    return [
      ...verdicts,
      fail('database', store.problem),
      fail('migrations', 'not checked: no database'),
      mail,
      fail('signing keys', 'not checked: no database'),
    ];
  }
  try {
    verdicts.push(ok('database', `${describeDatabase(config.databaseUrl)} answers`));
    const migrations = await checkMigrations(store.store);
    verdicts.push(migrations.verdict, mail);
    verdicts.push(
      migrations.tables
        ? await checkKeys(store.store, config, options.now ?? Math.floor(Date.now() / 1000))
        : { check: 'signing keys', status: 'skip', detail: 'not checked: the database has no tables yet' },
    );
    return verdicts;
  } finally {
    await store.store.close();
  }
}

/** The store of a database that exists and answers, never creating one (an SQLite file is made by the first start). */
async function openExisting(config: Config): Promise<{ store: Store } | { problem: string }> {
  const where = describeDatabase(config.databaseUrl);
  const file = /^sqlite:(.+)$/.exec(config.databaseUrl)?.[1];
  if (file !== undefined && file !== ':memory:' && !existsSync(file)) {
    return { problem: `no database at ${file} (the first start, or tessera migrate, creates it)` };
  }
  let store: Store | undefined;
  try {
    store = await openStore(config.databaseUrl, { pgPreparedStatements: config.pgPreparedStatements, pgPoolSize: 1 });
    await store.ping();
    return { store };
  } catch (err) {
    await store?.close().catch(() => {});
    return { problem: `${where}: ${message(err)}` };
  }
}

/** The migrations' verdict, and whether the tables are there at all (the first migration applied). */
async function checkMigrations(store: Store): Promise<{ verdict: Verdict; tables: boolean }> {
  const status = await store.migrationStatus();
  const { pending } = status;
  const newer = status.newer.map((migration) => migration.name);
  const tables = !pending.includes('001_initial');
  if (pending.length > 0) {
    const detail = `pending: ${pending.join(', ')} (tessera migrate, or the next start, applies them)`;
    return { verdict: fail('migrations', detail), tables };
  }
  const also = newer.length > 0 ? `; and a newer release's: ${newer.join(', ')} (this release runs on them)` : '';
  return { verdict: ok('migrations', `every migration of this release applied${also}`), tables };
}

async function checkMail(config: Config, options: CheckOptions): Promise<Verdict> {
  if (config.mail.mode === 'log')
    return { check: 'mail', status: 'skip', detail: 'no SMTP server: mails go to the log' };
  if (config.mail.mode === 'off' || config.mail.smtp === null) {
    return {
      check: 'mail',
      status: 'skip',
      detail: 'no SMTP server (TESSERA_SMTP_URL): nothing needing mail is offered',
    };
  }
  const transport = smtpTransport({
    ...config.mail.smtp,
    timeoutMs: options.smtpTimeoutMs ?? 10_000,
    ...(options.smtpCa ? { ca: options.smtpCa } : {}),
  });
  const server = new URL(config.mail.smtp.url).host;
  try {
    await transport.verify();
    return ok('mail', `${server} accepts a connection, TLS and the credentials`);
  } catch (err) {
    return fail('mail', `${server}: ${message(err)}`);
  } finally {
    transport.close();
  }
}

/** TESSERA_SECRET and the previous ones, or, in development, the secret kept in the data folder: never made here. */
function secretsOf(config: Config): string[] {
  const file = join(config.dataDir, 'secret');
  const current = config.secret ?? (existsSync(file) ? readFileSync(file, 'utf8').trim() : null);
  return current ? [current, ...config.previousSecrets] : [];
}

async function checkKeys(store: Store, config: Config, now: number): Promise<Verdict> {
  const rows = await store.listSigningKeys();
  if (rows.length === 0) return ok('signing keys', 'none yet: the first start makes them');
  const secrets = secretsOf(config);
  if (secrets.length === 0) return fail('signing keys', 'no TESSERA_SECRET to open them with');
  const states = keyStates(rows, now, keyTimeline(config)).filter((key) => key.state !== 'expired');
  const unopened = [];
  for (const key of states) {
    const row = rows.find((r) => r.kid === key.kid)!;
    try {
      createPrivateKey({ key: openPrivateJwk(row.privateJwkEnc, secrets) as never, format: 'jwk' });
    } catch {
      unopened.push(key.kid);
    }
  }
  if (unopened.length > 0) {
    return fail(
      'signing keys',
      `${unopened.length} of ${states.length} cannot be opened (${unopened.join(', ')}): ` +
        'is TESSERA_SECRET (or TESSERA_SECRET_PREVIOUS) the secret they were made with?',
    );
  }
  const active = SIGNING_ALGS.map((alg) => [alg, states.find((k) => k.alg === alg && k.state === 'active')] as const);
  const missing = active.filter(([, key]) => !key).map(([alg]) => alg);
  const signing = active.filter(([, key]) => key).map(([alg, key]) => `${alg} ${key!.kid}`);
  const note = missing.length > 0 ? `; none active for ${missing.join(', ')} yet (the next start makes one)` : '';
  return ok('signing keys', `${states.length} open under the secret; signing: ${signing.join(', ') || 'none'}${note}`);
}
