import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';
import { confidentialFlowWithOpenidClient, publicFlowWithOpenidClient } from './flows.ts';

describe('authorization code flow with openid-client (SQLite)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('confidential client with HTTP Basic: code, tokens, userinfo, refresh', () =>
    confidentialFlowWithOpenidClient(server));
  it('public client with PKCE S256: code, tokens, userinfo, refresh', () => publicFlowWithOpenidClient(server));
});

describe('authorization code flow with openid-client, ES256 by default', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { TESSERA_SIGNING_ALG: 'ES256' } });
  });
  after(() => server.close());

  it('confidential client', () => confidentialFlowWithOpenidClient(server));
  it('public client', () => publicFlowWithOpenidClient(server));
});
