// RFC 8693 without HTTP: the token-exchange grant called directly against a real store, with the
// clock the context holds. The exchanged token never outlives its subject token (the clock moved to
// a minute before the subject's expiry), a subject token past its expiry is invalid_request, and an
// actor token without its type, or a type without a token, is invalid_request (§2.1).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { InvalidRequest } from '../../../src/errors/index.ts';
import { authorizationCodeGrant } from '../../../src/oauth/grants/authorization-code.ts';
import { tokenExchangeGrant } from '../../../src/oauth/grants/token-exchange.ts';
import { body, type Fixture, fixture, NOW, rejectsWith } from './fixture.ts';

const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

let f: Fixture;
let subject: string;
before(async () => {
  f = await fixture();
  const { confidential } = f;
  const code = f.code(confidential, { scope: 'openid profile apps' });
  const fields = { grant_type: 'authorization_code', code, redirect_uri: confidential.redirectUri };
  subject = (await authorizationCodeGrant.handle(f.ctx, confidential.client, body(fields))).access_token;
});
after(() => f.close());

const exchangeAt = (now: number, fields: Record<string, string> = {}) =>
  tokenExchangeGrant.handle(
    { ...f.ctx, now },
    f.other.client,
    body({
      grant_type: tokenExchangeGrant.grantType,
      subject_token: subject,
      subject_token_type: ACCESS_TOKEN,
      ...fields,
    }),
  );

describe('token exchange: life and actor', () => {
  it('never outlives the subject token', async () => {
    const expiry = decodeJwt(subject).exp!;
    const early = await exchangeAt(NOW);
    assert.equal(decodeJwt(early.access_token).exp, Math.min(expiry, NOW + early.expires_in));
    const late = await exchangeAt(expiry - 60);
    assert.equal(late.expires_in, 60);
    assert.equal(decodeJwt(late.access_token).exp, expiry);
    await rejectsWith(exchangeAt(expiry), InvalidRequest, 'invalid_request', /subject_token is invalid/);
  });

  it('the actor is the client without an actor token; an actor token needs its type, and the type its token', async () => {
    const exchanged = await exchangeAt(NOW, { scope: 'apps' });
    assert.deepEqual(decodeJwt(exchanged.access_token).act, { sub: f.other.client.clientId });
    assert.equal(exchanged.scope, 'apps');
    await rejectsWith(exchangeAt(NOW, { actor_token: subject }), InvalidRequest, 'invalid_request', /go together/);
    await rejectsWith(exchangeAt(NOW, { actor_token_type: ACCESS_TOKEN }), InvalidRequest, 'invalid_request');
    const withActor = await exchangeAt(NOW, { actor_token: subject, actor_token_type: ACCESS_TOKEN });
    assert.deepEqual(decodeJwt(withActor.access_token).act, { sub: f.user.id });
  });

  it('an unknown requested_token_type is invalid_request', async () => {
    const refused = exchangeAt(NOW, { requested_token_type: 'urn:ietf:params:oauth:token-type:saml2' });
    await rejectsWith(refused, InvalidRequest, 'invalid_request', /requested_token_type/);
  });
});
