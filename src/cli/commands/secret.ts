// `tessera secret reencrypt [--dry-run]`: every value stored encrypted under a previous secret
// (TESSERA_SECRET_PREVIOUS) moved to TESSERA_SECRET (src/tokens/reencrypt.ts).
import type { Config } from '../../config/index.ts';
import { resolveSecret } from '../../config/secret.ts';
import type { Store } from '../../store/store.ts';
import { reencryptSecrets } from '../../tokens/reencrypt.ts';
import { UsageError } from '../operations.ts';
import { flags, type Io, parse } from './common.ts';

export async function secretCommand(store: Store, config: Config, args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'reencrypt')
    throw new UsageError(sub ? `unknown secret command "${sub}"` : 'secret needs a command: reencrypt');
  const { values } = parse(rest, flags('dry-run'));
  const dryRun = values['dry-run'] ?? false;
  const report = await reencryptSecrets(store, await resolveSecret(config), { dryRun });
  const verb = dryRun ? 'to re-encrypt' : 're-encrypted';
  for (const [column, counts] of Object.entries(report.columns))
    io.out(`${column}: ${counts.reencrypted} ${verb}, ${counts.current} already under TESSERA_SECRET`);
  if (Object.keys(report.columns).length === 0) io.out('nothing is stored encrypted yet');
  if (report.changedMeanwhile > 0) {
    io.err(`${report.changedMeanwhile} value(s) changed while this ran (a running instance wrote them): run it again`);
    return 1;
  }
  const pending = Object.values(report.columns).reduce((n, c) => n + c.reencrypted, 0);
  if (dryRun && pending > 0) return 1;
  if (!dryRun)
    io.out(
      'Every stored value is under TESSERA_SECRET now; see docs/rotation.md for when to drop the previous secret.',
    );
  return 0;
}
