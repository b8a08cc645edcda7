// The export format, version 1: JSON lines (one JSON object per line, UTF-8, `\n` after each).
//
//   {"format":"tessera-export","version":1,"exported_at":"…","migrations":["001_initial",…],
//    "tables":{"users":2,…}}                                   the header: what follows, and how many
//   {"table":"users","row":{"id":"…","username":"…",…}}        one line per row, table after table
//   {"end":"tessera-export","tables":{"users":2,…},"sha256":"…"}   the trailer
//
// The trailer's sha256 is the hex SHA-256 of every byte before it (each line and its `\n`), so a
// file cut short, joined or altered is refused whole. A reader of version 1 refuses another version.
import { createHash, type Hash } from 'node:crypto';

export const FORMAT = 'tessera-export';
export const VERSION = 1;

export interface Header {
  format: typeof FORMAT;
  version: number;
  exported_at: string;
  /** The migrations applied to the database it was exported from. */
  migrations: string[];
  /** The rows of each table that follow. */
  tables: Record<string, number>;
}

export interface RowLine {
  table: string;
  row: Record<string, unknown>;
}

export interface Trailer {
  end: typeof FORMAT;
  tables: Record<string, number>;
  sha256: string;
}

/** The running SHA-256 of the lines before the trailer. */
export class Checksum {
  readonly #hash: Hash = createHash('sha256');

  add(line: string): void {
    this.#hash.update(line).update('\n');
  }

  hex(): string {
    return this.#hash.copy().digest('hex');
  }
}

/** Why an export file is refused: nothing was imported. */
export class ImportRefused extends Error {
  override name = 'ImportRefused';
}
