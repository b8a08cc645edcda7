// The relying party's check of a passkey assertion (src/authn/passkeys/relying-party.ts, W3C WebAuthn
// §7.2), alone, on recorded authenticator data: one ES256 credential of https://id.example.com and two
// assertions it made, with counters 5 and 3 (recorded from test/helpers/authenticator.ts, whose
// signatures are made from the specification independently of the library). A counter is judged only
// under a valid signature (§7.2 step 21, Level 3 step 22): a counter not past a stored counter that is
// not 0 is a `counter` refusal (a cloned authenticator); the same bytes with a broken signature are
// `invalid`, which suspends nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RelyingParty } from '../../src/authn/passkeys/relying-party.ts';
import { counterWentBack } from '../../src/authn/passkeys/suspension.ts';
import type { Passkey } from '../../src/store/passkeys.ts';

const ORIGIN = 'https://id.example.com';

const CREDENTIAL_ID = 'ectY5uEEhZa2ltAxvc2zcxkX1wdc1eZBcMQXnuTXgSE';
/** The COSE key (EC2, ES256, P-256) as the registration gave it. */
const PUBLIC_KEY =
  'pQECAyYgASFYIPhb5yFMY3ERCVVD6xiljTa2NtddQFDhE6Tgtg4n-IU4Ilggy_B6MmVjUDhffzqWUEyyTzo9U3XIWQHlwIVGM4qo12s';

/** Assertions answering the challenges "recorded assertion 5" and "recorded assertion 3" (UTF-8, base64url). */
const RECORDED = {
  5: {
    challenge: Buffer.from('recorded assertion 5').toString('base64url'),
    response: {
      clientDataJSON:
        'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiY21WamIzSmtaV1FnWVhOelpYSjBhVzl1SURVIiwib3JpZ2luIjoiaHR0cHM6Ly9p' +
        'ZC5leGFtcGxlLmNvbSIsImNyb3NzT3JpZ2luIjpmYWxzZX0',
      authenticatorData: 'JlkQTsAKdriMqE84HF0LUSqgiRqfQADxZkQh8fexppkFAAAABQ',
      signature: 'MEQCIDa819wo-iLfGT14ZgGQyx4QYFyMa_pvPHpa85eoFr3pAiAHaGtHY1FYL9yo88VpIZ_ot76DExgcMcbqyepn--jKqw',
      userHandle: 'dTE',
    },
  },
  3: {
    challenge: Buffer.from('recorded assertion 3').toString('base64url'),
    response: {
      clientDataJSON:
        'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiY21WamIzSmtaV1FnWVhOelpYSjBhVzl1SURNIiwib3JpZ2luIjoiaHR0cHM6Ly9p' +
        'ZC5leGFtcGxlLmNvbSIsImNyb3NzT3JpZ2luIjpmYWxzZX0',
      authenticatorData: 'JlkQTsAKdriMqE84HF0LUSqgiRqfQADxZkQh8fexppkFAAAAAw',
      signature: 'MEUCIQDU6keHtRdjt89I6ZtlXdz-isNuRDm5QWe2D5HuMQOi2gIgQtQOuCJvB1cKfInBsUvgdYQ8AH8J3HnykqsSJASZLsA',
      userHandle: 'dTE',
    },
  },
} as const;

const passkey = (counter: number): Passkey => ({
  id: 'p1',
  userId: 'u1',
  credentialId: CREDENTIAL_ID,
  publicKey: new Uint8Array(Buffer.from(PUBLIC_KEY, 'base64url')),
  counter,
  transports: ['internal'],
  backupEligible: false,
  backedUp: false,
  name: 'Laptop',
  createdAt: 0,
  lastUsedAt: null,
  suspendedAt: null,
});

const relyingParty = new RelyingParty(ORIGIN, 'a'.repeat(43));

function check(recorded: 5 | 3, stored: number, tamper = false) {
  const { challenge, response } = RECORDED[recorded];
  const signature = Buffer.from(response.signature, 'base64url');
  if (tamper) signature[signature.length - 1]! ^= 1;
  const answer = {
    id: CREDENTIAL_ID,
    rawId: CREDENTIAL_ID,
    type: 'public-key' as const,
    clientExtensionResults: {},
    response: { ...response, signature: signature.toString('base64url') },
  };
  const ceremony = { purpose: 'authenticate' as const, userId: null, browser: 'b', iat: 0, exp: 1, nonce: 'n' };
  return relyingParty.verifyAssertion({
    response: answer,
    opened: { ceremony, challenge },
    passkey: passkey(stored),
    requireUserVerification: true,
  });
}

describe('a passkey assertion on recorded authenticator data', () => {
  it('a counter past the stored one verifies, and is the counter to store', async () => {
    const checked = await check(5, 4);
    assert.equal(checked.ok, true);
    assert.equal(checked.ok && checked.counter, 5);
    assert.equal((await check(3, 0)).ok, true, 'a stored 0 (never used) takes any counter');
  });

  it('a validly signed counter not past a stored one that is not 0: refused as `counter`', async () => {
    assert.deepEqual(await check(5, 5), { ok: false, reason: 'counter', detail: 'counter 5 after 5' });
    assert.deepEqual(await check(3, 5), { ok: false, reason: 'counter', detail: 'counter 3 after 5' });
  });

  it('the same bytes with a broken signature are `invalid`, never `counter`', async () => {
    const forged = await check(3, 5, true);
    assert.equal(forged.ok, false);
    assert.equal(!forged.ok && forged.reason, 'invalid');
    const past = await check(5, 4, true);
    assert.equal(!past.ok && past.reason, 'invalid');
  });

  it('answering another challenge, or from another origin: invalid, whatever the counter', async () => {
    const { response } = RECORDED[5];
    const ceremony = { purpose: 'authenticate' as const, userId: null, browser: 'b', iat: 0, exp: 1, nonce: 'n' };
    const answer = { id: CREDENTIAL_ID, rawId: CREDENTIAL_ID, type: 'public-key' as const, clientExtensionResults: {} };
    const other = await relyingParty.verifyAssertion({
      response: { ...answer, response },
      opened: { ceremony, challenge: RECORDED[3].challenge },
      passkey: passkey(9),
      requireUserVerification: true,
    });
    assert.equal(!other.ok && other.reason, 'invalid');
    const elsewhere = new RelyingParty('https://other.example.com', 'a'.repeat(43));
    const relayed = await elsewhere.verifyAssertion({
      response: { ...answer, response },
      opened: { ceremony, challenge: RECORDED[5].challenge },
      passkey: passkey(9),
      requireUserVerification: true,
    });
    assert.equal(!relayed.ok && relayed.reason, 'wrong_origin');
  });

  it('counterWentBack: WebAuthn §6.1.1', () => {
    const cases: Array<[stored: number, received: number, back: boolean]> = [
      [0, 0, false], // an authenticator that keeps no counter
      [0, 1, false],
      [4, 5, false],
      [5, 5, true],
      [5, 3, true],
      [5, 0, true], // a counter that stopped: a copy that keeps none
    ];
    for (const [stored, received, back] of cases)
      assert.equal(counterWentBack(stored, received), back, `${stored} → ${received}`);
  });
});
