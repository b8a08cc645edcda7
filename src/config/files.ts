// Settings read from files: for a setting that holds a secret (src/config/schema.ts marks them),
// NAME_FILE names a file whose contents are the value, as Docker secrets and systemd credentials
// provide them. One final newline is dropped (editors and `echo` add it); the rest is the value.
import { readFileSync } from 'node:fs';

/**
 * `env` with each NAME_FILE of `names` read into NAME. Both set, an unreadable file or an empty one
 * is an error (from `error`), never a silent fallback to a default.
 */
export function readSettingFiles(
  env: Record<string, string | undefined>,
  names: readonly string[],
  error: (message: string) => Error,
): Record<string, string | undefined> {
  const resolved = { ...env };
  for (const name of names) {
    const file = env[`${name}_FILE`];
    if (file === undefined || file === '') continue;
    if (env[name] !== undefined && env[name] !== '') throw error(`${name} and ${name}_FILE are both set: keep one`);
    let value: string;
    try {
      value = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      throw error(
        `${name}_FILE: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    if (value === '') throw error(`${name}_FILE: ${file} is empty`);
    resolved[name] = value;
  }
  return resolved;
}
