// The kinds of setting the schema (./schema.ts, ./schema-people.ts) is written in.
import { z } from 'zod';

/** A number of seconds, positive, `fallback` when unset. */
export const seconds = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/**
 * A setting that holds a secret, and so may also be given as a file's contents: NAME_FILE names the
 * file (Docker secrets, systemd credentials), which keeps the secret out of the environment that
 * `ps e` and crash reports show and out of shell quoting (./files.ts).
 */
export const secret = <T extends z.ZodType>(schema: T) => schema.meta({ file: true });
