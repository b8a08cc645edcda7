// TESSERA_SECRET resolution. Production requires it (config validation enforces that); development
// generates one on first use and keeps it in the data folder so keys and cookies survive restarts.
// With TESSERA_SECRET_PREVIOUS the result is a keyring (src/tokens/secrets.ts): the secret first,
// then the ones it replaced.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Config } from './index.ts';

/** TESSERA_SECRET and TESSERA_SECRET_PREVIOUS, newest first. */
export async function resolveSecret(config: Config): Promise<readonly string[]> {
  return [await currentSecret(config), ...config.previousSecrets];
}

async function currentSecret(config: Config): Promise<string> {
  if (config.secret) return config.secret;
  const file = join(config.dataDir, 'secret');
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing.length >= 32) return existing;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(32).toString('base64url');
  await writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' }).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  return (await readFile(file, 'utf8')).trim();
}
