// `tessera migrate`: applies the pending migrations, each a log line as the server writes it at start
// (JSON, naming the migration and the release). `tessera migrate --status`: where the database stands
// against this release, changing nothing: applied, pending, and those of a newer release.
import { pino } from 'pino';
import type { Config } from '../../config/index.ts';
import { openStore } from '../../store/index.ts';
import { logMigrations, VERSION } from '../../release.ts';
import { flags, type Io, JSON_OPTION, parse, withStore } from './common.ts';

/** Logs each migration applied as a JSON line to `write` (the server's line, from a command). */
export function migrationLogger(write: (line: string) => void, upToDate = false): (applied: string[]) => void {
  const log = pino({ level: 'info' }, { write: (line: string) => write(line.trimEnd()) });
  return (applied) => {
    logMigrations(log, applied);
    if (upToDate && applied.length === 0) log.info({ version: VERSION }, 'the database is up to date');
  };
}

export async function migrateCommand(config: Config, args: string[], io: Io): Promise<number> {
  const { values } = parse(args, { ...flags('status'), ...JSON_OPTION });
  if (!values.status) return withStore(config, async () => 0, migrationLogger(io.out, true));
  const store = await openStore(config.databaseUrl, {
    pgPreparedStatements: config.pgPreparedStatements,
    pgPoolSize: 1,
  });
  try {
    const { applied, pending, newer } = await store.migrationStatus();
    if (values.json) {
      const described = (list: typeof applied) => list.map((m) => ({ name: m.name, applied_at: m.appliedAt }));
      io.out(
        JSON.stringify({ version: VERSION, applied: described(applied), pending, newer: described(newer) }, null, 2),
      );
      return 0;
    }
    const rows = [
      ...[...applied, ...newer]
        .sort((a, b) => a.appliedAt.localeCompare(b.appliedAt) || a.name.localeCompare(b.name))
        .map((m) => [m.name, applied.includes(m) ? 'applied' : 'newer', m.appliedAt]),
      ...pending.map((name) => [name, 'pending', '-']),
    ];
    const width = Math.max(...rows.map(([name]) => name!.length), 'MIGRATION'.length);
    io.out(`${'MIGRATION'.padEnd(width)}  STATE    APPLIED`);
    for (const [name, state, at] of rows) io.out(`${name!.padEnd(width)}  ${state!.padEnd(7)}  ${at}`);
    io.out(
      `Tessera ${VERSION}: ${applied.length} applied, ${pending.length} pending, ${newer.length} of a newer release`,
    );
    if (newer.length > 0 && pending.length > 0)
      io.out(
        'This release cannot start on this database (it lacks migrations of this release): run the newer release.',
      );
    else if (newer.length > 0)
      io.out('A newer release migrated this database; this release runs on it (docs/upgrades.md).');
    else if (pending.length > 0) io.out('The next start, or tessera migrate, applies the pending migrations.');
    return 0;
  } finally {
    await store.close();
  }
}
