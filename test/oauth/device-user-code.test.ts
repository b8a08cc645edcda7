// User codes (RFC 8628 §6.1): eight letters of an alphabet without vowels and without letters read as
// digits, shown as XXXX-XXXX, read back in any case with or without the dash; anything else is no code.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatUserCode,
  newUserCode,
  normalizeUserCode,
  USER_CODE_ALPHABET,
  userCodeHash,
} from '../../src/oauth/device/user-code.ts';

describe('device user codes', () => {
  it('are eight letters of twenty, none of them a vowel, O or I', () => {
    assert.equal(USER_CODE_ALPHABET.length, 20);
    assert.doesNotMatch(USER_CODE_ALPHABET, /[AEIOUY0-9]/);
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const code = newUserCode();
      assert.match(code, /^[BCDFGHJKLMNPQRSTVWXZ]{8}$/);
      for (const letter of code) seen.add(letter);
    }
    assert.equal(seen.size, 20);
  });

  it('are shown with a dash and read back in any case, with or without it', () => {
    assert.equal(formatUserCode('BCDFGHJK'), 'BCDF-GHJK');
    for (const typed of ['BCDF-GHJK', 'bcdf-ghjk', 'bcdfghjk', ' Bcdf ghjK ']) {
      assert.equal(normalizeUserCode(typed), 'BCDFGHJK');
    }
    for (const typed of ['', 'BCDF-GHJ', 'BCDF-GHJKL', 'BCDF-GHJ0', 'ACDF-GHJK', 'BCDF_GHJK', 'ＢCDF-GHJK']) {
      assert.equal(normalizeUserCode(typed), undefined, typed);
    }
  });

  it('are kept as a hash of the canonical form', () => {
    assert.equal(userCodeHash('BCDFGHJK'), userCodeHash(normalizeUserCode('bcdf-ghjk')!));
    assert.notEqual(userCodeHash('BCDFGHJK'), 'BCDFGHJK');
    assert.match(userCodeHash('BCDFGHJK'), /^[0-9a-f]{64}$/);
  });
});
