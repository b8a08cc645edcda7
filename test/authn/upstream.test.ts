// The upstream step's rules alone: the factor a provider's sign-in makes (amr `fed`; two factors only
// for a provider trusted for its mfa), the second-factor policy after it, what is taken from a
// provider's claims, and the username a first sign-in starts from.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { acrOf, amrOf, levelOf } from '../../src/authn/factors.ts';
import { Level } from '../../src/authn/levels.ts';
import { nextStep } from '../../src/authn/policy.ts';
import { ANY_SIGN_IN } from '../../src/authn/requirement.ts';
import { steps } from '../../src/authn/registry.ts';
import { upstreamFactor } from '../../src/authn/upstream/step.ts';
import type { UpstreamProvider } from '../../src/store/upstream.ts';
import { usernameBase } from '../../src/upstream/accounts.ts';
import { identityFromClaims, type UpstreamIdentity } from '../../src/upstream/identity.ts';

const NOW = 1_800_000_000;
const provider = (trustUpstreamMfa: boolean) => ({ id: 'corp', trustUpstreamMfa }) as UpstreamProvider;
const identity = (amr: string[], more: Partial<UpstreamIdentity> = {}): UpstreamIdentity => ({
  ...identityFromClaims('sub-1', { amr }),
  ...more,
});

describe('the factor of an upstream sign-in', () => {
  it('says fed, and nothing of the provider’s own methods, unless the provider is trusted for its mfa', () => {
    const said = identity(['pwd', 'otp', 'mfa']);
    const untrusted = upstreamFactor(provider(false), said, NOW);
    assert.deepEqual(untrusted, { method: 'upstream', amr: ['fed'], at: NOW });
    assert.equal(levelOf([untrusted]), Level.sfa);
    assert.deepEqual(amrOf([untrusted]), ['fed']);

    const trusted = upstreamFactor(provider(true), identity(['pwd', 'otp', 'mfa', 'x-custom', 'pwd']), NOW);
    assert.deepEqual(trusted, { method: 'upstream-mfa', amr: ['fed', 'pwd', 'otp'], at: NOW });
    assert.equal(levelOf([trusted]), Level.mfa);
    assert.deepEqual(amrOf([trusted]), ['fed', 'pwd', 'otp', 'mfa']);
    assert.equal(acrOf([trusted], []), 'urn:tessera:acr:mfa');
    // Trusted, but the provider did not say mfa: one factor.
    assert.equal(upstreamFactor(provider(true), identity(['pwd']), NOW).method, 'upstream');
    // Trusted and said, but linking an account here now: one factor, the account's own must follow.
    const linking = upstreamFactor(provider(true), said, NOW, true);
    assert.deepEqual(linking, { method: 'upstream', amr: ['fed'], at: NOW });
    assert.deepEqual(nextStep([linking], ANY_SIGN_IN, new Set(['totp'])), { kind: 'step', methods: ['totp'] });
  });

  it('is a first step after which a user’s second factor is still asked for', () => {
    // The authenticator-app step (src/authn/totp/step.ts), enrolled.
    const registry = steps();
    const one = [upstreamFactor(provider(false), identity([]), NOW)];
    assert.deepEqual(nextStep(one, ANY_SIGN_IN, new Set(['totp']), registry), { kind: 'step', methods: ['totp'] });
    assert.deepEqual(nextStep(one, ANY_SIGN_IN, new Set(), registry), { kind: 'done' });
    const two = [upstreamFactor(provider(true), identity(['mfa']), NOW)];
    assert.deepEqual(nextStep(two, ANY_SIGN_IN, new Set(['totp']), registry), { kind: 'done' });
    assert.deepEqual(nextStep(one, { ...ANY_SIGN_IN, level: Level.mfa }, new Set(), registry), { kind: 'unmet' });
  });
});

describe('what a provider’s claims say', () => {
  it('takes email_verified only as the boolean true, and the ID token’s claims before userinfo’s', () => {
    const person = identityFromClaims(
      's',
      { email: 'a@example.com', email_verified: 'true', amr: ['pwd', 7] },
      { email: 'b@example.com', email_verified: true, name: ' Ada ' },
    );
    assert.equal(person.email, 'a@example.com');
    assert.equal(person.emailVerified, false);
    assert.equal(person.name, 'Ada');
    assert.deepEqual(person.amr, ['pwd']);
    assert.equal(identityFromClaims('s', { email_verified: true }).emailVerified, false);
  });

  it('starts a username from preferred_username, else the email’s local part, else provider and subject', () => {
    const base = (preferredUsername: string | null, email: string | null = null) =>
      usernameBase({ ...identity([]), preferredUsername, email });
    assert.equal(base('ada.lovelace'), 'ada.lovelace');
    assert.equal(base('Ada Lovelace (math)'), 'AdaLovelacemath');
    assert.equal(base('--option'), 'option');
    assert.equal(base('alice@corp.example'), 'alice@corp.example');
    assert.equal(base(null, 'bob.smith@example.org'), 'bob.smith');
    assert.equal(base('日本', 'カ@example.org'), 'user-sub-1');
    assert.equal(usernameBase({ ...identity([]), subject: 'AbC/123=' }, 'corp'), 'corp-AbC123');
    assert.equal(base('x'.repeat(100)).length, 56);
  });
});
