// The authorization endpoint's rules about the session, alone (src/oauth/authorize/index.ts): which
// session is enough (src/authn/sufficiency.ts), what prompt=none, max_age and acr_values do, and what
// the code carries of the sign-in for the ID token.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Factor } from '../../src/authn/factor.ts';
import { ACR_VALUES } from '../../src/authn/levels.ts';
import type { BrowserSession } from '../../src/authn/session.ts';
import { PendingSignInSealer } from '../../src/authn/flow.ts';
import { loadConfig } from '../../src/config/index.ts';
import { type AuthorizeDeps, type AuthorizeOutcome, authorize } from '../../src/oauth/authorize/index.ts';
import { CodeSealer } from '../../src/oauth/codes.ts';
import { InteractionSealer } from '../../src/oauth/interaction.ts';
import { paramsFrom } from '../../src/oauth/params.ts';
import { type Client, SERVER_LIFETIMES } from '../../src/store/clients.ts';
import { userRecord } from '../helpers/users.ts';

const [SFA, MFA, PHR] = ACR_VALUES;
const NOW = 1_800_000_000;
const SECRET = 's'.repeat(32);
const config = loadConfig({ TESSERA_ISSUER: 'https://id.example', TESSERA_SECRET: SECRET });
const client: Client = {
  clientId: 'app',
  secretHash: 'ab'.repeat(32),
  name: 'App',
  redirectUris: ['https://app.example/cb'],
  postLogoutRedirectUris: [],
  scopes: ['openid', 'email'],
  grantTypes: ['authorization_code', 'refresh_token'],
  allowedOrigins: [],
  tokenEndpointAuthMethod: 'client_secret_basic',
  // First-party: no consent page, so the rules about the session decide alone.
  firstParty: true,
  idTokenSignedResponseAlg: null,
  createdAt: NOW,
  registeredVia: 'operator',
  ownerId: null,
  registrationTokenHash: null,
  metadata: {},
  previousSecret: null,
  lifetimes: SERVER_LIFETIMES,
};
const user = userRecord({ id: 'user-1', username: 'ada', email: 'ada@example.com', passwordHash: '$argon2id$…' });
const codes = new CodeSealer(SECRET);
// Only what these requests read: the client, and (a step-up's enrolment) the user and their passkeys.
let hasPasskey = false;
const store = {
  getClient: async (id: string) => (id === client.clientId ? client : undefined),
  getUserById: async (id: string) => (id === user.id ? user : undefined),
  hasPasskeys: async () => hasPasskey,
  hasTotp: async () => false,
  hasRecoveryCodes: async () => false,
} as unknown as AuthorizeDeps['store'];
const deps: AuthorizeDeps = {
  config,
  store,
  sealer: new InteractionSealer(SECRET),
  pending: new PendingSignInSealer(SECRET),
  codes,
};

const pwd = (at: number): Factor => ({ method: 'password', amr: ['pwd'], at });
const session = (factors: Factor[]): BrowserSession => ({
  id: 'session',
  userId: user.id,
  authTime: factors[0]!.at,
  factors,
  user,
});

function request(extra: Record<string, string> = {}) {
  const params = { client_id: 'app', redirect_uri: 'https://app.example/cb', response_type: 'code' };
  return paramsFrom(new URLSearchParams({ ...params, scope: 'openid email', state: 'st', ...extra }));
}

/** The redirect's query, when the outcome is one. */
function redirected(outcome: AuthorizeOutcome): URLSearchParams {
  assert.equal(outcome.kind, 'redirect', JSON.stringify(outcome));
  return new URL((outcome as { location: string }).location).searchParams;
}

const answer = (extra: Record<string, string>, s: BrowserSession | undefined) =>
  authorize(deps, request(extra), s, NOW, () => 'browser-binding');

describe('the authorization endpoint and the session', () => {
  it('a password session is enough by default: the code carries auth_time, amr and acr', async () => {
    const query = redirected(await answer({}, session([pwd(NOW - 100)])));
    const code = codes.open(query.get('code')!, NOW)!;
    assert.deepEqual([code.authTime, code.amr, code.acr], [NOW - 100, ['pwd'], SFA]);
    assert.equal(query.get('state'), 'st');
  });

  it('no session: the sign-in page; prompt=none: login_required (OIDC Core §3.1.2.6)', async () => {
    assert.equal((await answer({}, undefined)).kind, 'login');
    const query = redirected(await answer({ prompt: 'none' }, undefined));
    assert.deepEqual(
      [query.get('error'), query.get('state'), query.get('iss')],
      ['login_required', 'st', 'https://id.example'],
    );
  });

  it('max_age counts from the last factor: older is a sign-in, within is a code', async () => {
    assert.equal((await answer({ max_age: '60' }, session([pwd(NOW - 61)]))).kind, 'login');
    assert.equal(
      redirected(await answer({ max_age: '60', prompt: 'none' }, session([pwd(NOW - 61)]))).get('error'),
      'login_required',
    );
    assert.ok(redirected(await answer({ max_age: '60' }, session([pwd(NOW - 60)]))).get('code'));
  });

  it('prompt=login is a sign-in whatever the session', async () => {
    assert.equal((await answer({ prompt: 'login' }, session([pwd(NOW)]))).kind, 'login');
  });

  it('acr_values above what the user has enrolled: unmet_authentication_requirements, never a downgrade', async () => {
    const query = redirected(await answer({ acr_values: MFA }, session([pwd(NOW - 5)])));
    assert.equal(query.get('error'), 'unmet_authentication_requirements');
    assert.equal(query.get('code'), null);
    assert.deepEqual([query.get('state'), query.get('iss')], ['st', 'https://id.example']);
    // Without a page to step up on, the answer is login_required.
    assert.equal(
      redirected(await answer({ acr_values: MFA, prompt: 'none' }, session([pwd(NOW)]))).get('error'),
      'login_required',
    );
  });

  it('acr_values above the session, for a user with a passkey: a step-up to it, from the session', async () => {
    hasPasskey = true;
    try {
      for (const acrValues of [MFA, PHR]) {
        const outcome = await answer({ acr_values: acrValues! }, session([pwd(NOW - 5)]));
        assert.equal(outcome.kind, 'step');
        assert.equal(outcome.kind === 'step' && outcome.method, 'passkey');
      }
    } finally {
      hasPasskey = false;
    }
  });

  it('acr_values are alternatives: the lowest met answers, with the value asked; unknown values are ignored', async () => {
    for (const [acrValues, acr] of [
      [`${MFA} ${SFA}`, SFA],
      ['urn:example:unknown', SFA],
      [`urn:example:unknown ${SFA}`, SFA],
    ]) {
      const query = redirected(await answer({ acr_values: acrValues! }, session([pwd(NOW)])));
      assert.equal(codes.open(query.get('code')!, NOW)!.acr, acr, acrValues);
    }
  });
});
