// `tessera keys …`: list the signing keys and rotate them.
import type { Config } from '../../config/index.ts';
import { resolveSecret } from '../../config/secret.ts';
import type { SigningKeyStore } from '../../store/store.ts';
import { KeyStore, listKeys } from '../../tokens/keystore.ts';
import { UsageError } from '../operations.ts';
import { formatTime, type Io, parse } from './common.ts';

export async function keysCommand(store: SigningKeyStore, config: Config, args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'list': {
      const { values } = parse(rest, { json: { type: 'boolean' } });
      const keys = await listKeys(store);
      if (values.json) io.out(JSON.stringify(keys, null, 2));
      else if (keys.length === 0) io.out('no keys (they are generated on the first start)');
      else for (const k of keys) io.out(`${k.kid}  ${k.alg}  ${k.status.padEnd(7)}  ${formatTime(k.createdAt)}`);
      return 0;
    }
    case 'rotate': {
      const { values } = parse(rest, { alg: { type: 'string' } });
      const alg = values.alg ?? config.signingAlg;
      if (alg !== 'RS256' && alg !== 'ES256') throw new UsageError('--alg must be RS256 or ES256');
      const keyStore = await KeyStore.open(store, await resolveSecret(config));
      const { kid } = await keyStore.rotate(alg);
      io.out(`new ${alg} signing key ${kid}; older ${alg} keys are retired but still published in the JWKS`);
      io.out('Running servers start signing with it within a minute.');
      return 0;
    }
    default:
      throw new UsageError(sub ? `unknown keys command "${sub}"` : 'keys needs a command: list, rotate');
  }
}
