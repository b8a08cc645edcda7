// What the previous start on this machine saw of the database (./detect.ts's Seen), kept where the
// instance keeps its state: beside a SQLite file (`tessera.db-restore-watch`), in TESSERA_DATA_DIR
// for PostgreSQL (`restore-watch.json`). A database copied back while every instance was stopped is
// then found behind what the last instance here saw. Written whole and renamed into place.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { sqlitePath } from '../store/index.ts';
import type { Seen } from './detect.ts';

/** Where the mark of `databaseUrl` is kept; undefined for a database in memory. */
export function localMarkFile(databaseUrl: string, dataDir: string): string | undefined {
  const file = sqlitePath(databaseUrl);
  if (file === ':memory:') return undefined;
  return file === undefined ? join(dataDir, 'restore-watch.json') : `${file}-restore-watch`;
}

/** The mark, or undefined when there is none (a first start here) or it cannot be read as one. */
export async function readLocalMark(file: string): Promise<Seen | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const value = JSON.parse(text) as Partial<Seen>;
  if (typeof value.database !== 'string' || typeof value.counter !== 'number' || typeof value.epoch !== 'string')
    throw new Error(`${file} is not a restore watch mark`);
  return {
    database: value.database,
    counter: value.counter,
    epoch: value.epoch,
    ...(typeof value.by === 'string' ? { by: value.by } : {}),
  };
}

export async function writeLocalMark(file: string, seen: Seen): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const next = `${file}.${process.pid}.tmp`;
  await writeFile(next, `${JSON.stringify(seen)}\n`, { mode: 0o600 });
  await rename(next, file);
}
