// The check of a DPoP proof on its own (src/tokens/dpop-proof.ts): the thumbprint is RFC 7638's for
// every key type, and each rule of RFC 9449 §4.3 refuses what breaks it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { DpopProofError, jwkThumbprint, singleProof, verifyDpopProof } from '../../src/tokens/dpop-proof.ts';
import { dpopKey, dpopProof } from '../helpers/dpop.ts';

const URL = 'https://auth.example.com/oauth2/token';

describe('DPoP proofs', () => {
  it('the thumbprint is RFC 7638 for EC, RSA and OKP keys', async () => {
    // RFC 7638 §3.1's example.
    const example = {
      kty: 'RSA',
      n:
        '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMs' +
        'tn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajr' +
        'n1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw',
      e: 'AQAB',
      alg: 'RS256',
      kid: '2011-04-29',
    };
    assert.equal(jwkThumbprint(example), 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
    for (const alg of ['ES256', 'PS256', 'EdDSA']) {
      const { publicKey } = await generateKeyPair(alg);
      const jwk = await exportJWK(publicKey);
      assert.equal(jwkThumbprint(jwk), await calculateJwkThumbprint(jwk), alg);
    }
    assert.throws(() => jwkThumbprint({ kty: 'oct', k: 'x' }), DpopProofError);
  });

  it('a good proof gives its key, jti and iat; the query of htu is ignored', async () => {
    const key = await dpopKey();
    const now = Math.floor(Date.now() / 1000);
    const proof = await dpopProof(key, 'POST', `${URL}?a=1`, { claims: { iat: now, jti: 'j1', nonce: 'n' } });
    assert.deepEqual(await verifyDpopProof(proof, { method: 'POST', url: URL, now }), {
      jkt: key.jkt,
      jti: 'j1',
      iat: now,
      nonce: 'n',
    });
  });

  it('refuses what breaks a rule of §4.3', async () => {
    const key = await dpopKey();
    const now = Math.floor(Date.now() / 1000);
    const refused = async (proof: string, expected: Partial<Parameters<typeof verifyDpopProof>[1]> = {}) =>
      assert.rejects(verifyDpopProof(proof, { method: 'POST', url: URL, now, ...expected }), DpopProofError);
    await refused(await dpopProof(key, 'GET', URL));
    await refused(await dpopProof(key, 'POST', 'https://auth.example.com/other'));
    await refused(await dpopProof(key, 'POST', 'not a url'));
    await refused(await dpopProof(key, 'POST', URL, { claims: { iat: now - 301 } }));
    await refused(await dpopProof(key, 'POST', URL, { claims: { iat: now + 61 } }));
    await refused(await dpopProof(key, 'POST', URL, { claims: { jti: '' } }));
    await refused(await dpopProof(key, 'POST', URL, { claims: { jti: 'x'.repeat(300) } }));
    await refused(await dpopProof(key, 'POST', URL, { claims: { nonce: 5 } }));
    await refused(await dpopProof(key, 'POST', URL, { header: { typ: 'JWT' } }));
    await refused(await dpopProof(key, 'POST', URL, { header: { jwk: undefined } }));
    await refused(await dpopProof(await dpopKey('ES384'), 'POST', URL));
    await refused(await dpopProof(key, 'POST', URL, { accessToken: 'a' }), { accessToken: 'b' });
    await refused(await dpopProof(key, 'POST', URL), { accessToken: 'b' });
    await refused('a.b.c');
    assert.throws(() => singleProof(['a', 'b']), DpopProofError);
    assert.throws(() => singleProof('a.b.c, d.e.f'), DpopProofError);
  });
});
