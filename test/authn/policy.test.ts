// The sign-in policy's rules, alone: what factors add up to (amr, acr), what a request needs
// (requirementFor), which step comes next (nextStep), and whether a session is enough (shortfall).
// Steps to come are described here as they will describe themselves (src/authn/step.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { acrOf, amrOf, lastFactorAt, levelOf } from '../../src/authn/factors.ts';
import type { Factor } from '../../src/authn/factor.ts';
import { ACR_VALUES, Level } from '../../src/authn/levels.ts';
import { accountSignIn, consoleSignIn, nextStep, requirementFor } from '../../src/authn/policy.ts';
import { ANY_SIGN_IN, type Requirement } from '../../src/authn/requirement.ts';
import type { BrowserSession } from '../../src/authn/session.ts';
import { steps } from '../../src/authn/registry.ts';
import type { Step } from '../../src/authn/step.ts';
import { shortfall } from '../../src/authn/sufficiency.ts';
import { parseFactors } from '../../src/store/sessions.ts';
import { userRecord } from '../helpers/users.ts';

const [SFA, MFA, PHR] = ACR_VALUES;
const step = (method: string, s: Partial<Step> = {}): Step => ({
  method,
  first: false,
  second: true,
  factors: 1,
  phishingResistant: false,
  enrolled: () => true,
  verify: async () => assert.fail('the policy never verifies a step'),
  ...s,
});
const [password, passkey] = steps();
const totp = step('totp');
const REGISTRY = [password!, passkey!, totp];

const pwd = (at = 100): Factor => ({ method: 'password', amr: ['pwd'], at });
const otp = (at = 110): Factor => ({ method: 'totp', amr: ['otp'], at });
const key = (at = 120): Factor => ({ method: 'passkey', amr: ['hwk', 'user'], at });
const need = (over: Partial<Requirement> = {}): Requirement => ({ ...ANY_SIGN_IN, ...over });

describe('factors: level, amr and acr', () => {
  it('the steps: a password, an upstream provider, a reset link (first, one factor; two for upstream-mfa), a passkey', () => {
    assert.deepEqual(
      steps().map((s) => [s.method, s.first, s.second, s.factors, s.phishingResistant]),
      [
        ['password', true, false, 1, false],
        ['passkey', true, true, 2, true],
        ['upstream', true, false, 1, false],
        // A provider trusted for its mfa, whose sign-in said so.
        ['upstream-mfa', true, false, 2, false],
        // An authenticator app and a recovery code: second factors only, one each.
        ['totp', false, true, 1, false],
        ['recovery-code', false, true, 1, false],
        // Following a password reset's link: a first factor, never asked for (nobody enrols it).
        ['mail-link', true, false, 1, false],
      ],
    );
  });
  it('one step is sfa however often it is done; two are mfa; a phishing-resistant one among two is phr', () => {
    assert.equal(levelOf([], REGISTRY), Level.none);
    assert.equal(levelOf([pwd()], REGISTRY), Level.sfa);
    assert.equal(levelOf([pwd(100), pwd(200)], REGISTRY), Level.sfa);
    assert.equal(levelOf([pwd(), otp()], REGISTRY), Level.mfa);
    assert.equal(levelOf([key()], REGISTRY), Level.phr, 'a passkey with user verification is two factors');
    assert.equal(levelOf([pwd(), key()], REGISTRY), Level.phr);
    // A step nobody knows any more (removed since the session began) counts as one factor.
    assert.equal(levelOf([pwd(), { method: 'gone', amr: [], at: 1 }], REGISTRY), Level.mfa);
  });
  it("amr is every factor's values once, with mfa from two factors on (RFC 8176 §2)", () => {
    assert.deepEqual(amrOf([pwd()], REGISTRY), ['pwd']);
    assert.deepEqual(amrOf([pwd(), pwd(300)], REGISTRY), ['pwd']);
    assert.deepEqual(amrOf([pwd(), otp()], REGISTRY), ['pwd', 'otp', 'mfa']);
    assert.deepEqual(amrOf([key()], REGISTRY), ['hwk', 'user', 'mfa']);
  });
  it('acr is the highest value asked that the factors meet, else the level they reach; never more', () => {
    assert.equal(acrOf([], [], REGISTRY), null);
    assert.equal(acrOf([pwd()], [], REGISTRY), SFA);
    assert.equal(acrOf([pwd(), otp()], [], REGISTRY), MFA);
    assert.equal(acrOf([key()], [MFA], REGISTRY), MFA, 'what was asked, when met');
    assert.equal(acrOf([key()], [SFA, MFA], REGISTRY), MFA);
    assert.equal(acrOf([key()], ['urn:other', SFA], REGISTRY), SFA);
    assert.equal(acrOf([pwd()], [MFA], REGISTRY), SFA, 'what was reached, when not: never claimed');
    assert.equal(acrOf([pwd(), otp()], [PHR], REGISTRY), MFA);
  });
  it('max_age counts from the last factor; a session from before migration 002 is a password at auth_time', () => {
    assert.equal(lastFactorAt([pwd(100), otp(150)]), 150);
    assert.deepEqual(parseFactors(null, 42), [pwd(42)]);
    assert.deepEqual(parseFactors(JSON.stringify([pwd(7), otp(9)]), 1), [pwd(7), otp(9)]);
    assert.deepEqual(parseFactors('[{"method":1}]', 1), []);
  });
});

describe('requirementFor: what a request needs', () => {
  const facts = { prompts: [], maxAge: null, acrValues: [], scopes: ['openid'] };
  it('any sign-in by default', () => {
    assert.deepEqual(requirementFor(facts, 1000), need());
  });
  it('prompt=login forces a sign-in after the request began; max_age bounds the last factor', () => {
    assert.deepEqual(
      requirementFor({ ...facts, prompts: ['login'] }, 1000),
      need({ forceLogin: true, freshSince: 1000 }),
    );
    assert.deepEqual(requirementFor({ ...facts, maxAge: 60 }, 1000), need({ freshSince: 940 }));
    assert.deepEqual(requirementFor({ ...facts, maxAge: 0 }, 1000), need({ freshSince: 1000 }));
  });
  it('acr_values: the lowest level asked that Tessera knows (they are alternatives); unknown ones ignored', () => {
    assert.equal(requirementFor({ ...facts, acrValues: [MFA] }, 0).level, Level.mfa);
    assert.equal(requirementFor({ ...facts, acrValues: [PHR, MFA] }, 0).level, Level.mfa);
    assert.equal(requirementFor({ ...facts, acrValues: ['urn:other', PHR] }, 0).level, Level.phr);
    assert.equal(requirementFor({ ...facts, acrValues: ['urn:other'] }, 0).level, Level.sfa);
    assert.deepEqual(requirementFor({ ...facts, acrValues: ['urn:other', PHR] }, 0).acrValues, ['urn:other', PHR]);
  });
  it('a client or a scope that needs two factors raises the level, never lowers it', () => {
    assert.equal(requirementFor({ ...facts, clientRequiresMfa: true }, 0).level, Level.mfa);
    assert.equal(requirementFor({ ...facts, clientRequiresMfa: true, acrValues: [PHR] }, 0).level, Level.phr);
    const mfaScopes = new Set(['payments']);
    assert.equal(requirementFor({ ...facts, scopes: ['openid', 'payments'], mfaScopes }, 0).level, Level.mfa);
    assert.equal(requirementFor({ ...facts, scopes: ['openid'], mfaScopes }, 0).level, Level.sfa);
  });
});

describe('nextStep: what a sign-in does after a factor', () => {
  const none = new Set<string>();
  const all = new Set(['password', 'totp', 'passkey']);
  it('a password is enough for a user with nothing else, unless more is asked: then it cannot be met', () => {
    assert.deepEqual(nextStep([pwd()], need(), new Set(['password']), REGISTRY), { kind: 'done' });
    assert.deepEqual(nextStep([pwd()], need({ level: Level.mfa }), new Set(['password']), REGISTRY), { kind: 'unmet' });
    // Today's registry: nobody can have a second factor.
    assert.deepEqual(nextStep([pwd()], need({ level: Level.mfa }), new Set(['password'])), { kind: 'unmet' });
    assert.deepEqual(nextStep([pwd()], need(), none), { kind: 'done' });
  });
  it('a user who enrolled a second factor is asked for it, whatever the request asks', () => {
    assert.deepEqual(nextStep([pwd()], need(), new Set(['password', 'totp']), REGISTRY), {
      kind: 'step',
      methods: ['totp'],
    });
    assert.deepEqual(nextStep([pwd(), otp()], need(), all, REGISTRY), { kind: 'done' });
    assert.deepEqual(nextStep([key()], need(), all, REGISTRY), { kind: 'done' }, 'a passkey alone is two');
  });
  it('steps reaching the level asked come first; a phishing-resistant level only a passkey meets', () => {
    assert.deepEqual(nextStep([pwd()], need(), all, REGISTRY), { kind: 'step', methods: ['passkey', 'totp'] });
    assert.deepEqual(nextStep([pwd()], need({ level: Level.phr }), all, REGISTRY), {
      kind: 'step',
      methods: ['passkey'],
    });
    assert.deepEqual(nextStep([pwd(), otp()], need({ level: Level.phr }), new Set(['totp']), REGISTRY), {
      kind: 'unmet',
    });
    // A code that could not reach the level is not asked for.
    assert.deepEqual(nextStep([pwd()], need({ level: Level.phr }), new Set(['totp']), REGISTRY), { kind: 'unmet' });
    // A user's own second factor is still asked for when the request's level is already met...
    assert.deepEqual(nextStep([pwd()], need(), new Set(['totp']), REGISTRY), { kind: 'step', methods: ['totp'] });
  });
  it('steps asked for by name are asked for, or cannot be met', () => {
    assert.deepEqual(nextStep([pwd(), otp()], need({ methods: ['passkey'] }), all, REGISTRY), {
      kind: 'step',
      methods: ['passkey'],
    });
    assert.deepEqual(nextStep([pwd()], need({ methods: ['passkey'] }), new Set(['totp']), REGISTRY), { kind: 'unmet' });
  });
});

describe('shortfall: whether a session is enough for a request', () => {
  const user = userRecord({ id: 'u', passwordHash: 'x' });
  const session = (factors: Factor[]): BrowserSession => ({ id: 's', userId: 'u', authTime: factors[0]!.at, factors });
  it('no session, or its user gone or disabled', () => {
    assert.equal(shortfall(undefined, user, need()), 'no-session');
    assert.equal(shortfall(session([pwd()]), undefined, need()), 'no-session');
    assert.equal(shortfall(session([pwd()]), { ...user, disabled: true }, need()), 'no-session');
    assert.equal(shortfall(session([pwd()]), { ...user, id: 'other' }, need()), 'no-session');
  });
  it('a sign-in the request forces', () => {
    assert.equal(shortfall(session([pwd(2000)]), user, need({ forceLogin: true, freshSince: 1000 })), 'login');
  });
  it('max_age counts from the last factor', () => {
    assert.equal(shortfall(session([pwd(100)]), user, need({ freshSince: 150 })), 'max-age');
    assert.equal(shortfall(session([pwd(100), otp(150)]), user, need({ freshSince: 150 })), undefined);
    assert.equal(shortfall(session([pwd(100), otp(149)]), user, need({ freshSince: 150 })), 'max-age');
  });
  it('a level or step the session has not reached', () => {
    assert.equal(shortfall(session([pwd()]), user, need()), undefined);
    assert.equal(shortfall(session([pwd()]), user, need({ level: Level.mfa })), 'level');
    assert.equal(shortfall(session([pwd(), otp()]), user, need({ level: Level.mfa })), undefined);
    assert.equal(shortfall(session([pwd(), otp()]), user, need({ methods: ['passkey'] })), 'level');
    assert.equal(shortfall(session([pwd(), otp()]), user, need({ methods: ['totp'] })), undefined);
  });
});

describe('the second-factor policy: TESSERA_MFA, a client, scopes', () => {
  const facts = { prompts: [], maxAge: null, acrValues: [], scopes: ['openid'] };
  const real = steps();
  it("the operator's policy needs two factors and has a user without one enrol; a client's acr_values does not", () => {
    assert.deepEqual(
      requirementFor({ ...facts, mfa: 'required' }, 0),
      need({ level: Level.mfa, mfa: 'required', enrol: true }),
    );
    assert.deepEqual(requirementFor({ ...facts, clientRequiresMfa: true }, 0), need({ level: Level.mfa, enrol: true }));
    const mfaScopes = new Set(['payments']);
    assert.equal(requirementFor({ ...facts, scopes: ['payments'], mfaScopes }, 0).enrol, true);
    assert.equal(requirementFor({ ...facts, acrValues: [MFA] }, 0).enrol, undefined);
    // Off: nothing to enrol, even for a client that asks two factors (a passkey can still give them).
    const off = requirementFor({ ...facts, clientRequiresMfa: true, mfa: 'off' }, 0);
    assert.deepEqual([off.level, off.enrol, off.mfa], [Level.mfa, undefined, 'off']);
    assert.deepEqual(requirementFor({ ...facts, mfa: 'optional' }, 0), need());
  });
  it('after the password: the app, or a recovery code instead; an enrolment when required and none; unmet when asked', () => {
    assert.deepEqual(nextStep([pwd()], ANY_SIGN_IN, new Set(['password', 'totp', 'recovery-code']), real), {
      kind: 'step',
      methods: ['totp', 'recovery-code'],
    });
    const required = requirementFor({ ...facts, mfa: 'required' }, 0);
    assert.deepEqual(nextStep([pwd()], required, new Set(['password']), real), { kind: 'enrol', method: 'totp' });
    assert.deepEqual(nextStep([pwd(), otp()], required, new Set(['password', 'totp']), real), { kind: 'done' });
    const asked = requirementFor({ ...facts, acrValues: [MFA] }, 0);
    assert.deepEqual(nextStep([pwd()], asked, new Set(['password']), real), { kind: 'unmet' });
  });
  it('TESSERA_MFA=off: an enrolled app is not asked for, a passkey still is', () => {
    const off = requirementFor({ ...facts, mfa: 'off' }, 0);
    assert.deepEqual(nextStep([pwd()], off, new Set(['password', 'totp', 'recovery-code']), real), { kind: 'done' });
    assert.deepEqual(nextStep([pwd()], off, new Set(['password', 'passkey', 'totp']), real), {
      kind: 'step',
      methods: ['passkey'],
    });
  });
  it('accountSignIn: what the account page asks follows TESSERA_MFA', () => {
    assert.deepEqual(accountSignIn('optional'), ANY_SIGN_IN);
    assert.deepEqual(accountSignIn('required'), need({ level: Level.mfa, mfa: 'required', enrol: true }));
    assert.deepEqual(accountSignIn('off'), need({ mfa: 'off' }));
  });
  it('consoleSignIn: the admin console asks two factors unless TESSERA_ADMIN_MFA=off', () => {
    assert.deepEqual(consoleSignIn('required', 'optional'), need({ level: Level.mfa, enrol: true }));
    assert.deepEqual(consoleSignIn('required', 'required'), need({ level: Level.mfa, mfa: 'required', enrol: true }));
    // No authenticator apps to enrol: a passkey is the only second factor.
    assert.deepEqual(consoleSignIn('required', 'off'), need({ level: Level.mfa, mfa: 'off' }));
    assert.deepEqual(consoleSignIn('off', 'optional'), ANY_SIGN_IN);
    assert.deepEqual(consoleSignIn('off', 'required'), accountSignIn('required'));
    const passwordOnly: BrowserSession = {
      id: 's',
      userId: 'u',
      authTime: 100,
      factors: [{ method: 'password', amr: ['pwd'], at: 100 }],
    };
    const admin = userRecord({ id: 'u' });
    assert.equal(shortfall(passwordOnly, admin, consoleSignIn('required', 'optional')), 'level');
    assert.equal(shortfall(passwordOnly, admin, consoleSignIn('off', 'optional')), undefined);
  });
});
