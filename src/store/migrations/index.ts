// Every migration, in order. A static map (no directory scanning) so it works without a build step.
import type { Migration } from 'kysely';
import * as initial from './001_initial.ts';
import * as revocation from './002_revocation.ts';
import * as writePath from './003_write_path.ts';
import * as tokenFamilies from './004_token_families.ts';

export const migrations: Record<string, Migration> = {
  '001_initial': initial,
  '002_revocation': revocation,
  '003_write_path': writePath,
  '004_token_families': tokenFamilies,
};
