// Which errors count as the database's faults (503, try again) and which stay the request's or the
// code's (a constraint, a bad statement: their own error, a 500 when nothing else handles them).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPostgresFault } from '../../src/store/postgres/faults.ts';
import { isSqliteFault } from '../../src/store/sqlite/faults.ts';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });
const withErrcode = (errcode: number) => Object.assign(new Error('x'), { code: 'ERR_SQLITE_ERROR', errcode });

describe('database faults', () => {
  it('PostgreSQL: lost or refused connections, shutdown, start-up, resources, a read-only standby', () => {
    for (const code of [
      '57P01',
      '57P02',
      '57P03',
      '08006',
      '08001',
      '53300',
      '53100',
      '25006',
      'ECONNREFUSED',
      'ECONNRESET',
    ]) {
      assert.ok(isPostgresFault(withCode(code)), code);
    }
    assert.ok(isPostgresFault(new Error('Connection terminated unexpectedly')));
    assert.ok(isPostgresFault(new Error('timeout exceeded when trying to connect')));
  });

  it('PostgreSQL: a constraint, a syntax error, a cancelled statement or a plain error are not', () => {
    for (const code of ['23505', '42601', '57014', '40001', '0A000']) assert.ok(!isPostgresFault(withCode(code)), code);
    assert.ok(!isPostgresFault(new Error('something else')));
    assert.ok(!isPostgresFault('Connection terminated'));
  });

  it('SQLite: full, read-only, I/O error, cannot open, busy; not a constraint or a syntax error', () => {
    for (const errcode of [13, 8, 10, 14, 5, 10 | (4 << 8), 8 | (1 << 8)])
      assert.ok(isSqliteFault(withErrcode(errcode)), String(errcode));
    for (const errcode of [1, 19, 2067, 11]) assert.ok(!isSqliteFault(withErrcode(errcode)), String(errcode));
    assert.ok(!isSqliteFault(new Error('x')));
  });
});
