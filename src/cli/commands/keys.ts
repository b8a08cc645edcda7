// `tessera keys …`: list the signing keys with their state and dates, and rotate them: staged (the
// new key signs once every cached JWKS has it), or `--now` for a compromised key.
import type { Config } from '../../config/index.ts';
import { resolveSecret } from '../../config/secret.ts';
import { CLI } from '../../events/index.ts';
import type { SigningKeyStore } from '../../store/signing-keys.ts';
import { rotateKey } from '../../tokens/key-rotation.ts';
import { JWKS_MAX_AGE, keyTimeline, stageDelay } from '../../tokens/key-timeline.ts';
import { KeyStore } from '../../tokens/keystore.ts';
import { UsageError } from '../operations.ts';
import { flags, formatTime, type Io, JSON_OPTION, parse, strings } from './common.ts';

const time = (at: number | null) => (at === null ? '-' : formatTime(at));

export async function keysCommand(store: SigningKeyStore, config: Config, args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  const open = async () => KeyStore.open(store, await resolveSecret(config), { timeline: keyTimeline(config) });
  switch (sub) {
    case 'list': {
      const { values } = parse(rest, JSON_OPTION);
      const keys = (await open()).states();
      if (values.json) {
        // The field names and ISO times every --json uses.
        const described = keys.map((k) => ({
          kid: k.kid,
          alg: k.alg,
          state: k.state,
          created_at: time(k.createdAt),
          activates_at: time(k.activatesAt),
          retires_at: k.retiresAt === null ? null : time(k.retiresAt),
          removed_at: k.removedAt === null ? null : time(k.removedAt),
        }));
        io.out(JSON.stringify(described, null, 2));
      } else {
        io.out('KID  ALG  STATE  CREATED  ACTIVATES  RETIRES  REMOVED');
        for (const k of keys) {
          const dates = [k.createdAt, k.activatesAt, k.retiresAt, k.removedAt].map(time).join('  ');
          io.out(`${k.kid}  ${k.alg}  ${k.state.padEnd(7)}  ${dates}`);
        }
      }
      return 0;
    }
    case 'rotate': {
      const { values } = parse(rest, { ...strings('alg'), ...flags('now') });
      const alg = values.alg ?? config.signingAlg;
      if (alg !== 'RS256' && alg !== 'ES256') throw new UsageError('--alg must be RS256 or ES256');
      const keys = await open();
      const emergency = values.now ?? false;
      const r = await rotateKey(keys, alg, { emergency, requester: CLI });
      if (r.already) {
        io.out(`a rotation of ${alg} is under way already: key ${r.kid} signs from ${formatTime(r.activatesAt)}`);
        io.out('Add --now to make it sign at once.');
      } else if (emergency) {
        io.err(
          `warning: ${alg} key ${r.kid} signs from now on. Until every instance has reloaded its keys (within ` +
            `${config.keyReloadInterval} s), the tokens it signs fail at the instances that have not, and relying ` +
            `parties holding a cached JWKS (up to ${JWKS_MAX_AGE} s) refuse them until they fetch it again. The ` +
            'key it replaces stays published until the tokens it signed have expired.',
        );
        io.out(`new ${alg} signing key ${r.kid}: active now`);
      } else {
        io.out(
          `new ${alg} signing key ${r.kid}: published now, signs from ${formatTime(r.activatesAt)} ` +
            `(in ${stageDelay(keys.timeline)} s, once every cached JWKS and every instance has it)`,
        );
      }
      return 0;
    }
    default:
      throw new UsageError(sub ? `unknown keys command "${sub}"` : 'keys needs a command: list, rotate');
  }
}
