import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { InvalidScope, InvalidToken } from '../../src/errors/index.ts';
import { redirectWith } from '../../src/oauth/redirect.ts';
import { CodeSealer } from '../../src/oauth/codes.ts';
import { InteractionSealer } from '../../src/oauth/interaction.ts';
import { isWellFormedPkceValue, verifyS256 } from '../../src/oauth/pkce.ts';
import { parseScope } from '../../src/oauth/scopes.ts';
import { parseBasicCredentials } from '../../src/oauth/client-auth/index.ts';
import { openPrivateJwk, sealPrivateJwk } from '../../src/tokens/keystore.ts';
import { hashPassword, verifyPassword } from '../../src/authn/password/hash.ts';
import { SealedBox } from '../../src/tokens/sealed.ts';

describe('PKCE (RFC 7636)', () => {
  it('verifies the RFC 7636 appendix B example', () => {
    assert.equal(
      verifyS256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'),
      true,
    );
    assert.equal(
      verifyS256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXl', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'),
      false,
    );
    // A verifier outside §4.1's characters never matches, even the challenge made from its own bytes.
    const odd = `${'a'.repeat(42)} é`;
    assert.equal(verifyS256(odd, createHash('sha256').update(odd).digest('base64url')), false);
  });
  it('accepts 43–128 unreserved characters only', () => {
    assert.equal(isWellFormedPkceValue('a'.repeat(43)), true);
    assert.equal(isWellFormedPkceValue('a'.repeat(128)), true);
    assert.equal(isWellFormedPkceValue('a'.repeat(42)), false);
    assert.equal(isWellFormedPkceValue('a'.repeat(129)), false);
    assert.equal(isWellFormedPkceValue(`${'a'.repeat(42)}+`), false);
    assert.equal(isWellFormedPkceValue(createHash('sha256').update('x').digest('base64url')), true);
  });
});

describe('scopes and credentials', () => {
  it('parses space-delimited scope tokens, dropping duplicates', () => {
    assert.deepEqual(parseScope('openid  profile openid'), ['openid', 'profile']);
    assert.throws(() => parseScope('open"id'), InvalidScope);
  });
  it('decodes form-urlencoded Basic credentials (RFC 6749 §2.3.1)', () => {
    const header = `Basic ${Buffer.from('my%3Aclient:p%40ss+word').toString('base64')}`;
    assert.deepEqual(parseBasicCredentials(header), { clientId: 'my:client', clientSecret: 'p@ss word' });
  });
});

describe('sealed values', () => {
  it('an interaction round-trips, and tampering or expiry is detected', () => {
    const sealer = new InteractionSealer('s'.repeat(32));
    const interaction = {
      request: {
        clientId: 'c',
        redirectUri: 'https://a/cb',
        scopes: ['openid'],
        state: null,
        nonce: null,
        codeChallenge: null,
        codeChallengeMethod: null,
        prompts: [],
        maxAge: null,
        resource: null,
      },
      need: { forceLogin: false, freshSince: 0, level: 1 as const, methods: [], acrValues: [] },
      exp: 100,
    };
    const sealed = sealer.seal(interaction);
    assert.deepEqual(sealer.open(sealed, 99), interaction);
    assert.equal(sealer.open(sealed, 100), undefined);
    assert.equal(sealer.open(`${sealed.slice(0, -2)}xx`, 99), undefined);
    assert.equal(new InteractionSealer('t'.repeat(32)).open(sealed, 99), undefined);
  });
  it('an authorization code is encrypted: it round-trips, hides what it carries, and fails closed', () => {
    const codes = new CodeSealer('s'.repeat(32));
    const fields = {
      clientId: 'client-one',
      userId: 'user-number-one',
      redirectUri: 'https://a.example/cb',
      scope: 'openid apps',
      codeChallenge: 'c'.repeat(43),
      codeChallengeMethod: 'S256',
      nonce: 'nonce-one',
      authTime: 5,
      claims: { email: 'one@mail.example', email_verified: true },
      resource: 'https://api.example/',
      amr: ['pwd'],
      acr: 'urn:tessera:acr:sfa',
      sid: 'session-sid',
    };
    const code = codes.issue(fields, 10, 60);
    const { id, ...rest } = codes.open(code, 10)!;
    assert.deepEqual(rest, { ...fields, claimsRequest: null, dpopJkt: null, iat: 10, exp: 70 });
    assert.match(id, /^[0-9a-f]{12}[A-Za-z0-9_-]{16}$/);
    assert.notEqual(codes.open(codes.issue(fields, 10, 60), 10)!.id, id, 'every code has an id of its own');
    assert.match(code, /^[A-Za-z0-9_-]+$/);
    assert.doesNotMatch(
      Buffer.from(code, 'base64url').toString('latin1'),
      /user-number-one|client-one|nonce-one|a\.example|mail\.example|session-sid/,
    );
    // Without claims the code carries none, and opens with none.
    assert.deepEqual(codes.open(codes.issue({ ...fields, claims: {} }, 10, 60), 10)!.claims, {});
    // A claims parameter travels in the code only when the request had one.
    const claimsRequest = '{"id_token":["name"],"userinfo":["picture"]}';
    const withRequest = codes.issue({ ...fields, claimsRequest }, 10, 60);
    assert.equal(codes.open(withRequest, 10)!.claimsRequest, claimsRequest);
    assert.ok(withRequest.length > code.length, 'the claims request is sealed in the code');
    // So does dpop_jkt (RFC 9449 §10).
    const dpopJkt = 'j'.repeat(43);
    assert.equal(codes.open(codes.issue({ ...fields, dpopJkt }, 10, 60), 10)!.dpopJkt, dpopJkt);
    for (const at of [0, 20, 40, Math.floor(code.length / 2), code.length - 2]) {
      const flipped = `${code.slice(0, at)}${code[at] === 'A' ? 'B' : 'A'}${code.slice(at + 1)}`;
      assert.equal(codes.open(flipped, 10), undefined, `a change at ${at} is detected`);
    }
    assert.equal(new CodeSealer('t'.repeat(32)).open(code, 10), undefined, 'another secret');
    assert.equal(new SealedBox('s'.repeat(32), 'another purpose').open(code, 10_000), undefined, 'another purpose');
    for (const bad of ['', 'x', 'not base64url!', code.slice(0, 40), 'A'.repeat(9000), `${code}.x`])
      assert.equal(codes.open(bad, 10), undefined);
  });
  it('a sealed box uses a key per hour: values open across the hour, and not after a day', () => {
    const box = new SealedBox<{ n: number }>('s'.repeat(32), 'test');
    const hour = 3_600_000;
    const at = 1_000 * hour - 1;
    const sealed = box.seal({ n: 1 }, at);
    const next = box.seal({ n: 2 }, at + 2);
    assert.notEqual(sealed.slice(0, 6), next.slice(0, 6), 'the two values name different hours');
    assert.deepEqual(box.open(sealed, at + 2), { n: 1 });
    assert.deepEqual(box.open(next, at), { n: 2 }, 'a clock a little behind still opens it');
    assert.deepEqual(box.open(sealed, at + 24 * hour), { n: 1 });
    assert.equal(box.open(sealed, at + 26 * hour), undefined);
    assert.equal(box.open(sealed, at - 3 * hour), undefined, 'nor long before it was sealed');
    assert.deepEqual(
      new SealedBox<{ n: number }>('s'.repeat(32), 'test').open(next, at),
      { n: 2 },
      'another instance with the secret opens it',
    );
  });
  it('private keys are encrypted under TESSERA_SECRET', () => {
    const sealed = sealPrivateJwk({ kty: 'EC', d: 'secret' }, 'a'.repeat(32));
    assert.doesNotMatch(sealed, /secret/);
    assert.deepEqual(openPrivateJwk(sealed, 'a'.repeat(32)), { kty: 'EC', d: 'secret' });
    assert.throws(() => openPrivateJwk(sealed, 'b'.repeat(32)), /TESSERA_SECRET/);
  });
  it('passwords are argon2id', async () => {
    const hash = await hashPassword('hunter22');
    assert.match(hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    assert.equal(await verifyPassword('hunter22', hash), true);
    assert.equal(await verifyPassword('hunter23', hash), false);
    assert.equal(await verifyPassword('x', 'not a hash'), false);
  });
});

describe('redirects to the client', () => {
  it('adds the parameters to the query as URLSearchParams would, keeping the registered query as it is', () => {
    const reference = (uri: string, params: Record<string, string | null>) => {
      const url = new URL(uri);
      for (const [key, value] of Object.entries(params)) if (value !== null) url.searchParams.append(key, value);
      return url.href;
    };
    let every = '';
    for (let i = 0; i < 256; i++) every += String.fromCharCode(i);
    every += '\u00e9\u4e2d\ud83d\ude00 +&=#?/';
    for (const uri of [
      'https://a.example/cb',
      'https://a.example/cb?x=1',
      'https://a.example/cb?',
      'https://a.example/cb?x=1&',
      'com.example.app:/oauth',
    ]) {
      for (const value of ['abc', every, "a b!'()~*-._", '']) {
        const params = { code: value, state: value === '' ? null : value, iss: 'http://127.0.0.1:3000/a b' };
        assert.equal(redirectWith(uri, params), reference(uri, params), `${uri} ${JSON.stringify(value)}`);
      }
    }
    assert.equal(redirectWith('https://a.example/cb?q=a%20b', { code: 'c' }), 'https://a.example/cb?q=a%20b&code=c');
  });
});

describe('configuration', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    assert.equal(config.issuer, 'http://localhost:3000');
    assert.equal(config.port, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.databaseUrl, 'sqlite:./data/tessera.db');
    assert.equal(config.accessTokenTtl, 86400);
    assert.equal(config.codeTtl, 60);
    assert.equal(config.signingAlg, 'RS256');
    assert.equal(config.demo, true);
    assert.deepEqual(
      [...config.scopes.keys()],
      ['openid', 'profile', 'email', 'address', 'phone', 'roles', 'admin', 'apps', 'webhooks'],
    );
    assert.ok(Object.isFrozen(config));
  });
  it('production requires https and a secret, and has no demo data', () => {
    assert.throws(() => loadConfig({ NODE_ENV: 'production' }), ConfigError);
    assert.throws(
      () => loadConfig({ NODE_ENV: 'production', TESSERA_ISSUER: 'https://auth.example.com' }),
      /TESSERA_SECRET/,
    );
    const config = loadConfig({
      NODE_ENV: 'production',
      TESSERA_ISSUER: 'https://auth.example.com/',
      TESSERA_SECRET: 'x'.repeat(32),
    });
    assert.equal(config.issuer, 'https://auth.example.com');
    assert.equal(config.port, 3000);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.demo, false);
  });
  it('rejects invalid values with every problem named', () => {
    assert.throws(() => loadConfig({ PORT: 'abc', TESSERA_CODE_TTL: '-1' }), /PORT[\s\S]*TESSERA_CODE_TTL/);
    assert.throws(() => loadConfig({ TESSERA_API_SCOPES: 'bad"scope=x' }), /not a valid scope token/);
    assert.throws(() => loadConfig({ TESSERA_ISSUER: 'http://x.example/?a=b' }), /query/);
  });
  it('PORT defaults to the issuer port', () => {
    assert.equal(loadConfig({ TESSERA_ISSUER: 'http://localhost:4444' }).port, 4444);
  });
});

describe('opaque tokens', () => {
  it('are 256-bit, base64url, and never repeat across pool refills', async () => {
    const { randomToken, newId } = await import('../../src/tokens/opaque.ts');
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const token = randomToken();
      assert.match(token, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(seen.has(token), false);
      seen.add(token);
      assert.match(newId(), /^[A-Za-z0-9_-]{22}$/);
    }
  });
  it('sortable ids order by creation time and stay unique within a millisecond', async () => {
    const { newSortableId } = await import('../../src/tokens/opaque.ts');
    const t = Date.UTC(2026, 10, 22);
    const ids = [
      newSortableId(t - 1),
      newSortableId(t),
      newSortableId(t),
      newSortableId(t + 1),
      newSortableId(2 ** 47),
    ];
    for (const id of ids) assert.match(id, /^[0-9a-f]{12}[A-Za-z0-9_-]{16}$/);
    assert.notEqual(ids[1], ids[2]);
    assert.ok(ids[0]! < ids[1]! && ids[0]! < ids[2]! && ids[1]! < ids[3]! && ids[2]! < ids[3]! && ids[3]! < ids[4]!);
  });
  it('refresh tokens name their grant and generation under an HMAC: any change, or another secret, is refused', async () => {
    const { RefreshTokens } = await import('../../src/tokens/refresh.ts');
    const tokens = new RefreshTokens('s'.repeat(32));
    const token = tokens.issue('0193a5c4e8f1AbCdEfGhIjKlMnOp', 36);
    assert.match(token, /^0193a5c4e8f1AbCdEfGhIjKlMnOp~10~[A-Za-z0-9_-]{43}$/);
    assert.equal(tokens.issue('0193a5c4e8f1AbCdEfGhIjKlMnOp', 36), token);
    assert.deepEqual(tokens.parse(token), { grantId: '0193a5c4e8f1AbCdEfGhIjKlMnOp', generation: 36 });
    assert.notEqual(tokens.issue('0193a5c4e8f1AbCdEfGhIjKlMnOp', 37), token);
    const mac = token.slice(token.lastIndexOf('~') + 1);
    for (const forged of [
      token.replace('~10~', '~11~'),
      token.replace('~10~', '~010~'),
      token.replace('Op~', 'Oq~'),
      `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`,
      `0193a5c4e8f1AbCdEfGhIjKlMnOp~${mac}`,
      `~10~${mac}`,
      `${token}~`,
      token.slice(0, -2),
      `${'x'.repeat(200)}~1~${mac}`,
    ]) {
      assert.equal(tokens.parse(forged), undefined, forged);
    }
    assert.equal(new RefreshTokens('t'.repeat(32)).parse(token), undefined);
  });
});

describe('access-token verification', () => {
  it('a token verified once is still checked for issuer, audience and expiry on every use', async () => {
    const { openStore } = await import('../../src/store/index.ts');
    const { KeyStore } = await import('../../src/tokens/keystore.ts');
    const { signAccessToken, verifyAccessToken } = await import('../../src/tokens/jwt.ts');
    const store = await openStore('sqlite::memory:');
    try {
      await store.migrate();
      const keys = await KeyStore.open(store, 'a-secret-of-thirty-two-characters!!');
      const now = Math.floor(Date.now() / 1000);
      const issuer = 'https://as.example';
      const token = await signAccessToken(keys, {
        issuer,
        audience: issuer,
        subject: 'u',
        clientId: 'c',
        scope: 'openid',
        grantId: 'g',
        authTime: now,
        now,
        ttl: 60,
        alg: 'ES256',
      });
      const expected = { issuer, audience: issuer, now };
      assert.equal((await verifyAccessToken(keys, token, expected)).sub, 'u');
      assert.equal((await verifyAccessToken(keys, token, expected)).sub, 'u');
      await assert.rejects(
        verifyAccessToken(keys, token, { ...expected, issuer: 'https://other.example' }),
        InvalidToken,
      );
      await assert.rejects(
        verifyAccessToken(keys, token, { ...expected, audience: 'https://api.example' }),
        InvalidToken,
      );
      await assert.rejects(verifyAccessToken(keys, token, { ...expected, now: now + 60 }), /expired/);
      assert.equal((await verifyAccessToken(keys, token, expected)).sub, 'u');
      const [header, payload, signature] = token.split('.');
      const tampered = `${header}.${payload}.${signature!.slice(0, -4)}AAAA`;
      await assert.rejects(verifyAccessToken(keys, tampered, expected), InvalidToken);
    } finally {
      await store.close();
    }
  });
});

describe('JWS signatures', () => {
  it('ES256 signatures are R || S, 64 bytes, also when R or S is shorter than 32 bytes', async () => {
    const { generateKeyPairSync, sign, verify } = await import('node:crypto');
    const { ecdsaDerToJose } = await import('../../src/tokens/jwt.ts');
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    let short = 0;
    let padded = 0;
    // About 1 in 128 signatures has a half below 2^248 and about 1 in 2 a half with a sign octet.
    for (let i = 0; short < 2 || padded < 2; i++) {
      assert.ok(i < 20_000, 'no short halves in 20,000 signatures');
      const data = Buffer.from(`message ${i}`);
      const der = sign('sha256', data, privateKey);
      const r = der[3]!;
      const s = der[4 + r + 1]!;
      if (r < 32 || s < 32) short++;
      if (r > 32 || s > 32) padded++;
      const jose = ecdsaDerToJose(der, 32);
      assert.equal(jose.length, 64);
      assert.ok(verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, jose), `signature ${i}`);
    }
  });

  it('what is not a DER ECDSA signature is refused', async () => {
    const { ecdsaDerToJose } = await import('../../src/tokens/jwt.ts');
    const valid = Buffer.from([0x30, 0x06, 0x02, 0x01, 0x05, 0x02, 0x01, 0x07]);
    const jose = ecdsaDerToJose(valid, 32);
    assert.equal(jose[31], 5);
    assert.equal(jose[63], 7);
    assert.equal(
      jose.subarray(0, 31).every((b) => b === 0),
      true,
    );
    for (const bad of [
      [0x31, 0x06, 0x02, 0x01, 0x05, 0x02, 0x01, 0x07], // not a SEQUENCE
      [0x30, 0x07, 0x02, 0x01, 0x05, 0x02, 0x01, 0x07], // wrong length
      [0x30, 0x06, 0x03, 0x01, 0x05, 0x02, 0x01, 0x07], // not an INTEGER
      [0x30, 0x06, 0x02, 0x01, 0x05, 0x02, 0x05, 0x07], // runs past the end
      [0x30, 0x25, 0x02, 0x21, 0x01, ...new Array(32).fill(1), 0x02, 0x00], // a half of 33 significant bytes
    ])
      assert.throws(() => ecdsaDerToJose(Buffer.from(bad), 32), /ECDSA/);
  });
});

describe('identifiers', () => {
  it('never start with - or _, so that a command line takes them as values', async () => {
    const { newId } = await import('../../src/tokens/opaque.ts');
    for (let i = 0; i < 2000; i++) assert.match(newId(), /^[A-Za-z0-9][A-Za-z0-9_-]{21}$/);
  });
});
