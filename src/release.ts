// The release this code is (package.json's version, bumped by the release step of docs/releasing.md),
// and how it reports the migrations it applies: one log line each, naming the release that applied it.
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** One line per migration applied, in the order applied. */
export function logMigrations(log: Pick<Logger, 'info'>, applied: string[]): void {
  for (const migration of applied)
    log.info({ migration, version: VERSION }, `applied migration ${migration} (Tessera ${VERSION})`);
}
