// A sign-in between its steps (src/authn/flow.ts): sealed for the next step's page, bound to the
// browser it began in, short-lived, opened only for a step it offered, and finished with the factor
// that page adds (`advance`). Steps to come are stood in for by a registry of the test's own where it matters.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ANY_SIGN_IN } from '../../src/authn/requirement.ts';
import {
  advance,
  begin,
  beginCarried,
  HELD,
  openPendingSignIn,
  PENDING_SIGN_IN_TTL,
  type PendingSignIn,
  PendingSignInSealer,
  type SignInDeps,
  soFar,
} from '../../src/authn/flow.ts';
import { Level } from '../../src/authn/levels.ts';
import type { User } from '../../src/store/users.ts';
import { userRecord } from '../helpers/users.ts';

const NOW = 1_800_000_000;
const user = userRecord({ id: 'u1', username: 'ada', email: 'ada@example.com', passwordHash: 'x' });
let stored: User | undefined = user;
const deps: SignInDeps = {
  store: {
    getUserById: async () => stored,
    hasPasskeys: async () => false,
    hasTotp: async () => false,
    hasRecoveryCodes: async () => false,
  } as unknown as SignInDeps['store'],
  pending: new PendingSignInSealer('s'.repeat(32)),
};
const pwd = { method: 'password', amr: ['pwd'], at: NOW };
const pending: PendingSignIn = {
  userId: user.id,
  factors: [pwd],
  authTime: NOW,
  need: { ...ANY_SIGN_IN, level: Level.mfa },
  offered: ['totp'],
  resume: 'sealed-request',
  clientId: 'app',
  browser: 'this-browser',
  exp: NOW + PENDING_SIGN_IN_TTL,
};
const open = (sealed: string, over: Partial<Parameters<typeof openPendingSignIn>[1]> = {}) =>
  openPendingSignIn(deps, { sealed, method: 'totp', isBound: (b) => b === 'this-browser', now: NOW, ...over });

describe('a sign-in between its steps', () => {
  it('after a password, a user with a second factor goes on to it, what is done sealed for its page', async () => {
    // The real authenticator-app step (src/authn/totp/step.ts), enrolled by this user.
    const withTotp = { ...deps, store: { ...deps.store, hasTotp: async (id: string) => id === user.id } };
    const progress = await advance(withTotp, {
      user,
      factors: [pwd],
      authTime: NOW,
      need: ANY_SIGN_IN,
      resume: 'sealed-request',
      clientId: 'app',
      bind: () => 'this-browser',
      now: NOW,
    });
    assert.equal(progress.kind, 'next-step');
    if (progress.kind !== 'next-step') return;
    assert.equal(progress.method, 'totp');
    const opened = await open(progress.pending);
    assert.deepEqual(opened?.pending, { ...pending, need: ANY_SIGN_IN });
    // Without the step, the same sign-in is complete.
    const plain = await advance(deps, {
      user,
      factors: [pwd],
      authTime: NOW,
      need: ANY_SIGN_IN,
      resume: null,
      clientId: null,
      bind: () => 'this-browser',
      now: NOW,
    });
    assert.equal(plain.kind, 'signed-in');
  });

  it('after a password, a user with nothing else is signed in: the factors and auth_time become the session', async () => {
    const progress = await advance(deps, {
      user,
      factors: [pwd],
      authTime: NOW,
      need: ANY_SIGN_IN,
      resume: null,
      clientId: null,
      bind: () => assert.fail('nothing is sealed for a complete sign-in'),
      now: NOW,
    });
    assert.deepEqual(progress, {
      kind: 'signed-in',
      signedIn: { userId: user.id, authTime: NOW, factors: [pwd] },
      user,
      resume: null,
      clientId: null,
    });
  });

  it('opens only in its browser, for a step it offered, unexpired, untampered, for a user still active', async () => {
    const sealed = deps.pending.seal(pending);
    assert.deepEqual(await open(sealed), { pending, user });
    assert.equal(await open(sealed, { isBound: () => false }), undefined, 'another browser');
    assert.equal(await open(sealed, { method: 'passkey' }), undefined, 'a step not offered');
    assert.equal(await open(sealed, { now: NOW + PENDING_SIGN_IN_TTL }), undefined, 'expired');
    assert.equal(await open(`${sealed.slice(0, -2)}xx`), undefined, 'tampered');
    assert.equal(await open(new PendingSignInSealer('t'.repeat(32)).seal(pending)), undefined, 'another secret');
    assert.equal(
      await openPendingSignIn(deps, { sealed: undefined, method: 'totp', isBound: () => true, now: NOW }),
      undefined,
    );
    stored = { ...user, disabled: true };
    try {
      assert.equal(await open(sealed), undefined, 'a disabled user');
    } finally {
      stored = user;
    }
  });

  it('the next step adds its factor to those sealed, keeping auth_time, the request and the client', async () => {
    const otp = { method: 'totp', amr: ['otp'], at: NOW + 20 };
    // Two factors meet the level asked: signed in, to resume the request.
    const progress = await advance(deps, soFar({ pending, user }, NOW + 20, otp));
    assert.deepEqual(progress, {
      kind: 'signed-in',
      signedIn: { userId: user.id, authTime: NOW, factors: [pwd, otp] },
      user,
      resume: 'sealed-request',
      clientId: 'app',
    });
  });
});

describe('advance: where a sign-in goes after a step verified', () => {
  const bound = () => 'this-browser';
  const account = { need: ANY_SIGN_IN, resume: null, clientId: null, bind: bound };

  it('begin: a first step signs in for what its page was for, or for what the step carried (an upstream flow)', async () => {
    const verified = { user, factor: pwd };
    assert.deepEqual(begin(verified, account, NOW), {
      user,
      factors: [pwd],
      authTime: NOW,
      need: ANY_SIGN_IN,
      resume: null,
      clientId: null,
      bind: bound,
      now: NOW,
    });
    const fed = { method: 'upstream', amr: ['fed'], at: NOW };
    const carried = {
      need: { ...ANY_SIGN_IN, level: Level.mfa },
      resume: 'sealed',
      clientId: 'app',
      browser: 'flow-browser',
    };
    const so = beginCarried({ user, factor: fed, carried }, NOW);
    assert.deepEqual([so.need, so.resume, so.clientId, so.bind()], [carried.need, 'sealed', 'app', 'flow-browser']);
    // A reset link carries where it goes back to, and the page the rest.
    const link = begin(
      { user, factor: pwd, carried: { resume: '/reset/password?reset=x', clientId: null } },
      account,
      NOW,
    );
    assert.deepEqual([link.resume, link.bind()], ['/reset/password?reset=x', 'this-browser']);
  });

  it('a requirement the operator sets and the user cannot meet yet: an authenticator app is enrolled on the way', async () => {
    const need = { ...ANY_SIGN_IN, level: Level.mfa, mfa: 'required' as const, enrol: true };
    const progress = await advance(deps, { ...begin({ user, factor: pwd }, account, NOW), need });
    assert.equal(progress.kind, 'next-step');
    if (progress.kind !== 'next-step') return;
    assert.equal(progress.method, 'totp');
    const opened = await open(progress.pending);
    assert.deepEqual([opened?.pending.enrol, opened?.pending.offered], [true, ['totp']]);
  });

  it('a level nobody can reach ends the sign-in at the level reached: signed in, the request told', async () => {
    const need = { ...ANY_SIGN_IN, level: Level.phr };
    const progress = await advance(deps, { ...begin({ user, factor: pwd }, account, NOW), need });
    assert.equal(progress.kind, 'signed-in');
  });

  it('a sign-in held while a page spoke (HELD) goes on with the factors sealed, adding none', async () => {
    const held = { ...pending, offered: [HELD] };
    const progress = await advance(deps, soFar({ pending: held, user }, NOW + 30));
    assert.equal(progress.kind, 'signed-in');
    if (progress.kind === 'signed-in') assert.deepEqual(progress.signedIn.factors, [pwd]);
  });

  it('the steps never call the flow: none of their modules imports it', () => {
    const room = new URL('../../src/authn/', import.meta.url);
    for (const folder of ['password', 'passkeys', 'totp', 'recovery', 'upstream', 'mail-link']) {
      for (const file of readdirSync(new URL(`${folder}/`, room))) {
        const text = readFileSync(new URL(`${folder}/${file}`, room), 'utf8');
        assert.doesNotMatch(text, /from '\.\.\/(flow|registry)\.ts'/, `${folder}/${file}`);
      }
    }
  });
});
