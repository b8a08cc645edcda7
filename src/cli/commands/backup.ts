// `tessera backup` and `tessera restore-finish`: a consistent, owner-only copy of the database, marked
// so that the first start on a database restored from it ends every session and refresh token and
// replaces the signing keys (src/store/restores.ts); and the same fence by hand, after a restore
// made by other means (a copy taken without `tessera backup`, a file-system snapshot, PITR).
import { existsSync } from 'node:fs';
import type { Config } from '../../config/index.ts';
import { resolveSecret } from '../../config/secret.ts';
import { CLI } from '../../events/index.ts';
import { finishRestore } from '../../lifecycle.ts';
import { backupDatabase } from '../../store/backup.ts';
import type { Store } from '../../store/store.ts';
import { keyTimeline } from '../../tokens/key-timeline.ts';
import { KeyStore } from '../../tokens/keystore.ts';
import { newId } from '../../tokens/opaque.ts';
import { UsageError } from '../operations.ts';
import { formatTime, type Io, parse, requireOption } from './common.ts';

/** `tessera backup --output FILE`: never migrates, so a backup before an upgrade is of the schema as it is. */
export async function backupCommand(config: Config, args: string[], io: Io): Promise<number> {
  const { values } = parse(args, { output: { type: 'string', short: 'o' } });
  const output = requireOption(values.output, '--output');
  // The store creates it with O_EXCL too; this only says so plainly.
  if (existsSync(output)) throw new UsageError(`${output} exists already: name a new file`);
  const takenAt = Math.floor(Date.now() / 1000);
  await backupDatabase(config.databaseUrl, output, { id: `backup:${newId()}`, takenAt });
  io.out(`backup written to ${output} (readable by its owner only), taken at ${formatTime(takenAt)}`);
  io.out('Keep it apart from TESSERA_SECRET; to restore it, follow docs/backup.md.');
  return 0;
}

export async function restoreFinishCommand(store: Store, config: Config, args: string[], io: Io): Promise<number> {
  parse(args, {});
  const { fence } = await finishRestore(store, { force: true, requester: CLI });
  // After a point-in-time recovery, the new timeline is the database's now: the next start, which
  // would take it for a restore nobody finished (docs/backup.md#restores-detected), fences nothing more.
  const timeline = await store.databaseTimeline().catch(() => null);
  if (timeline !== null) await store.recordTimeline(timeline);
  // New keys now, so that `tessera keys list` shows them; a server starting later would make them too.
  await KeyStore.open(store, await resolveSecret(config), { timeline: keyTimeline(config) });
  io.out(`restore finished at ${formatTime(fence!.fencedAt)}: every session and refresh token ended,`);
  io.out('the signing keys replaced. Users sign in again; apps get new tokens by sending them through sign-in.');
  return 0;
}
