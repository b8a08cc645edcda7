// A client as the store holds it, for tests that write one straight into a store or hand one to a
// function (not through the CLI or registration): a confidential web app registered by the operator
// at the tests' fixed time, with the server's token lifetimes; each test overrides what it relies on.
import type { Client } from '../../src/store/clients.ts';
import { SERVER_LIFETIMES } from '../../src/store/clients.ts';
import { newId } from '../../src/tokens/opaque.ts';
import { CREATED_AT } from './users.ts';

export function clientRecord(over: Partial<Client> = {}): Client {
  return {
    clientId: newId(),
    secretHash: 'ab'.repeat(32),
    name: 'Client',
    redirectUris: ['https://app.example/cb'],
    postLogoutRedirectUris: [],
    scopes: ['openid'],
    grantTypes: ['authorization_code', 'refresh_token'],
    allowedOrigins: [],
    tokenEndpointAuthMethod: 'client_secret_basic',
    firstParty: false,
    idTokenSignedResponseAlg: null,
    createdAt: CREATED_AT,
    registeredVia: 'operator',
    ownerId: null,
    registrationTokenHash: null,
    metadata: {},
    previousSecret: null,
    lifetimes: SERVER_LIFETIMES,
    ...over,
  };
}
