// Every migration, in order. A static map (no directory scanning) so it works without a build step.
import type { Migration } from 'kysely';
import * as initial from './001_initial.ts';

export const migrations: Record<string, Migration> = { '001_initial': initial };
