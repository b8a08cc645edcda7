// What a returning user's authorization request derives from its session, and that it derives it
// once: the factors column parsed once per text (src/store/sessions.ts), the ID token's claims of the
// factors once per factors array (src/authn/session.ts), and the same answers as deriving them anew.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { acrOf, amrOf, lastFactorAt } from '../../src/authn/factors.ts';
import type { Factor } from '../../src/authn/factor.ts';
import { ACR_VALUES, Level } from '../../src/authn/levels.ts';
import { ANY_SIGN_IN, type Requirement } from '../../src/authn/requirement.ts';
import { type BrowserSession, signInClaims } from '../../src/authn/session.ts';
import { shortfall } from '../../src/authn/sufficiency.ts';
import { parseFactors } from '../../src/store/sessions.ts';
import type { User } from '../../src/store/users.ts';

const [SFA, MFA, PHR] = ACR_VALUES;
const text = (factors: Factor[]) => JSON.stringify(factors);
const pwd = (at = 100): Factor => ({ method: 'password', amr: ['pwd'], at });
const otp = (at = 110): Factor => ({ method: 'totp', amr: ['otp'], at });
const key = (at = 120): Factor => ({ method: 'passkey', amr: ['hwk', 'user'], at });

describe('the session row: its factors parsed once', () => {
  it('the same column text gives the same factors, frozen, as parsing it anew would', () => {
    const column = text([pwd(1_700_000_001), otp(1_700_000_002)]);
    const first = parseFactors(column, 1_700_000_001);
    assert.deepEqual(first, [pwd(1_700_000_001), otp(1_700_000_002)]);
    // A text read again (a fresh string from the database) gives the very array parsed before.
    assert.equal(parseFactors(column.slice(0), 1_700_000_001), first);
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first[0]) && Object.isFrozen(first[0]!.amr));
    assert.throws(() => (first as Factor[]).push(key()), TypeError);
    // Another session's factors are its own.
    assert.deepEqual(parseFactors(text([key(1_700_000_003)]), 1_700_000_003), [key(1_700_000_003)]);
  });
  it('as before: no column is a password at auth_time; what is not a factor is left out', () => {
    assert.deepEqual(parseFactors(null, 42), [pwd(42)]);
    assert.deepEqual(parseFactors('{"method":"password"}', 42), []);
    assert.deepEqual(parseFactors(`[{"method":"password"},${JSON.stringify(otp(7))},null,3]`, 42), [otp(7)]);
  });
  it('keeps a bounded number of texts: beyond, the oldest is parsed again, to the same factors', () => {
    const oldest = text([pwd(1)]);
    const parsed = parseFactors(oldest, 1);
    for (let i = 0; i < 10_000; i++) parseFactors(text([pwd(1_000_000 + i)]), 0);
    const again = parseFactors(oldest, 1);
    assert.notEqual(again, parsed);
    assert.deepEqual(again, parsed);
  });
});

describe("the code's claims of the session's factors", () => {
  const cases: Array<[Factor[], string[]]> = [
    [[pwd()], []],
    [[pwd(), otp(150)], []],
    [[key()], []],
    [
      [pwd(), otp()],
      [PHR!, MFA!],
    ],
    [[key()], [MFA!, SFA!]],
    [[pwd()], ['urn:example:unknown']],
  ];
  it('are what amrOf, acrOf and lastFactorAt say, with acr_values or without', () => {
    for (const [factors, asked] of cases) {
      const claims = signInClaims(factors, asked);
      assert.deepEqual(
        { ...claims, amr: [...claims.amr] },
        { authTime: lastFactorAt(factors), amr: amrOf(factors), acr: acrOf(factors, asked) },
        `${JSON.stringify(factors)} asked ${asked.join(' ')}`,
      );
    }
  });
  it('are derived once per factors array when the request asks for no acr value', () => {
    const factors = parseFactors(text([pwd(200), otp(300)]), 200);
    const claims = signInClaims(factors, []);
    assert.equal(signInClaims(factors, []), claims);
    assert.deepEqual({ ...claims, amr: [...claims.amr] }, { authTime: 300, amr: ['pwd', 'otp', 'mfa'], acr: MFA });
    // acr_values choose among the levels reached: asked for sfa, a two-factor session says sfa.
    assert.equal(signInClaims(factors, [SFA!]).acr, SFA);
    assert.ok(Object.isFrozen(claims) && Object.isFrozen(claims.amr));
  });
});

describe('shortfall: the cheap answer first, the same answer', () => {
  const user = { id: 'u', disabled: false } as User;
  const session = (factors: Factor[]): BrowserSession => ({ id: 's', userId: 'u', authTime: 0, factors });
  const need = (over: Partial<Requirement> = {}): Requirement => ({ ...ANY_SIGN_IN, ...over });
  it('a plain request: any factor is enough, none is not', () => {
    assert.equal(shortfall(session([pwd(0)]), user, need()), undefined);
    assert.equal(shortfall(session([]), user, need()), 'level');
    assert.equal(shortfall(session([]), user, need({ level: Level.none })), undefined);
  });
  it('max_age, a level or steps asked for are still checked', () => {
    assert.equal(shortfall(session([pwd(100)]), user, need({ freshSince: 101 })), 'max-age');
    assert.equal(shortfall(session([pwd(100)]), user, need({ level: Level.mfa })), 'level');
    assert.equal(shortfall(session([pwd(100)]), user, need({ methods: ['totp'] })), 'level');
    assert.equal(shortfall(session([pwd(100), otp(100)]), user, need({ methods: ['totp'] })), undefined);
  });
});
