// TESSERA_SECRET as a keyring: what a previous secret made still opens while it is in the keyring,
// and nothing new is made under it; without it, nothing it made opens.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ceremonies } from '../../src/authn/passkeys/ceremony.ts';
import { CodeSealer } from '../../src/oauth/codes.ts';
import { InteractionSealer } from '../../src/oauth/interaction.ts';
import { decryptAtRest, encryptAtRest } from '../../src/tokens/at-rest.ts';
import { openPrivateJwk, sealPrivateJwk } from '../../src/tokens/keystore.ts';
import { RefreshTokens } from '../../src/tokens/refresh.ts';
import { openWebhookSecret, sealWebhookSecret } from '../../src/webhooks/subscriptions.ts';

const OLD = 'o'.repeat(32);
const NEW = 'n'.repeat(32);
const OTHER = 'x'.repeat(32);

describe('the secret keyring', () => {
  it('refresh tokens: issued under the newest secret, parsed under any of the keyring', () => {
    const before = new RefreshTokens(OLD).issue('grant', 3);
    const ring = new RefreshTokens([NEW, OLD]);
    assert.deepEqual(ring.parse(before), { grantId: 'grant', generation: 3 });
    const after = ring.issue('grant', 4);
    assert.deepEqual(new RefreshTokens(NEW).parse(after), { grantId: 'grant', generation: 4 }, 'made under NEW');
    assert.equal(new RefreshTokens(OLD).parse(after), undefined);
    assert.equal(new RefreshTokens(NEW).parse(before), undefined, 'OLD dropped: its tokens are refused');
    assert.equal(new RefreshTokens([NEW, OTHER]).parse(before), undefined);
  });

  it('sealed codes and interactions: sealed under the newest, opened under any', () => {
    const fields = {
      clientId: 'c',
      userId: 'u',
      redirectUri: 'https://a.example/cb',
      scope: 'openid',
      codeChallenge: null,
      codeChallengeMethod: null,
      nonce: null,
      authTime: 10,
      amr: ['pwd'],
      acr: null,
      resource: null,
      claims: {},
    };
    const now = Math.floor(Date.now() / 1000);
    const code = new CodeSealer(OLD).issue(fields, now, 60);
    assert.equal(new CodeSealer([NEW, OLD]).open(code, now)!.userId, 'u');
    assert.equal(new CodeSealer(NEW).open(code, now), undefined);
    const next = new CodeSealer([NEW, OLD]).issue(fields, now, 60);
    assert.equal(new CodeSealer(NEW).open(next, now)!.userId, 'u');
    assert.equal(new CodeSealer(OLD).open(next, now), undefined);

    const interaction = { request: {} as never, need: {} as never, exp: now + 60 };
    const sealed = new InteractionSealer(OLD).seal(interaction);
    assert.equal(new InteractionSealer([NEW, OLD]).open(sealed, now)!.exp, now + 60);
    assert.equal(new InteractionSealer(NEW).open(sealed, now), undefined);
    assert.equal(new InteractionSealer(OLD).open(new InteractionSealer([NEW, OLD]).seal(interaction), now), undefined);
  });

  it('passkey challenges sealed before a restore fence do not open after it, nor under another secret', () => {
    const now = Math.floor(Date.now() / 1000);
    const input = { purpose: 'authenticate' as const, userId: null, browser: 'b' };
    const asReturned = (challenge: string) => Buffer.from(challenge).toString('base64url');
    const opening = { purpose: 'authenticate' as const, isBound: () => true, now };
    const before = asReturned(new Ceremonies(OLD).challenge(input, now));
    assert.ok(new Ceremonies([NEW, OLD]).open(before, opening), 'under a previous secret');
    assert.equal(new Ceremonies(NEW).open(before, opening), undefined);
    assert.equal(new Ceremonies([NEW, OLD], 'fence-1').open(before, opening), undefined, 'after a restore');
    const after = asReturned(new Ceremonies(NEW, 'fence-1').challenge(input, now));
    assert.ok(new Ceremonies(NEW, 'fence-1').open(after, opening));
  });

  it('codes sealed before a restore fence do not open after it', () => {
    const now = Math.floor(Date.now() / 1000);
    const fields = {
      clientId: 'c',
      userId: 'u',
      redirectUri: 'https://a.example/cb',
      scope: 'openid',
      codeChallenge: null,
      codeChallengeMethod: null,
      nonce: null,
      authTime: 10,
      amr: ['pwd'],
      acr: null,
      resource: null,
      claims: {},
    };
    const code = new CodeSealer(NEW).issue(fields, now, 60);
    assert.equal(new CodeSealer(NEW, 'fence-1').open(code, now), undefined);
    const fenced = new CodeSealer(NEW, 'fence-1').issue(fields, now, 60);
    assert.equal(new CodeSealer(NEW, 'fence-1').open(fenced, now)!.userId, 'u');
    assert.equal(new CodeSealer(NEW, 'fence-2').open(fenced, now), undefined);
  });

  it('values stored encrypted: encrypted under the newest, decrypted under any, saying which', () => {
    const stored = encryptAtRest(OLD, 'webhookSecret', 'whsec_abc');
    assert.deepEqual(decryptAtRest([NEW, OLD], 'webhookSecret', stored), { plaintext: 'whsec_abc', current: false });
    assert.equal(decryptAtRest(NEW, 'webhookSecret', stored), undefined);
    assert.equal(decryptAtRest(OLD, 'signingKey', stored), undefined, 'another purpose');
    const moved = encryptAtRest([NEW, OLD], 'webhookSecret', 'whsec_abc');
    assert.deepEqual(decryptAtRest([NEW, OLD], 'webhookSecret', moved), { plaintext: 'whsec_abc', current: true });
    for (const bad of ['', 'a.b', 'a.b.c.d', `${stored.slice(0, -2)}AA`])
      assert.equal(decryptAtRest([NEW, OLD], 'webhookSecret', bad), undefined);

    assert.equal(openWebhookSecret(sealWebhookSecret('whsec_x', OLD), [NEW, OLD]), 'whsec_x');
    assert.throws(() => openWebhookSecret(sealWebhookSecret('whsec_x', OLD), NEW), /TESSERA_SECRET_PREVIOUS/);
    const jwk = { kty: 'oct', k: 'abc' };
    assert.deepEqual(openPrivateJwk(sealPrivateJwk(jwk, OLD), [NEW, OLD]), jwk);
    assert.throws(
      () => openPrivateJwk(sealPrivateJwk(jwk, OLD), [NEW, OTHER]),
      /signing key.s private key: cannot decrypt it/,
    );
  });
});
