// Refresh token reuse interval and the family's absolute lifetime.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';

describe('refresh token policy', () => {
  const servers: TestServer[] = [];
  after(() => Promise.all(servers.map((s) => s.close())));

  async function setup(env: Record<string, string>) {
    const server = await startServer({ env });
    servers.push(server);
    const c = server.clients.confidential;
    const tokens = (await (await exchange(server, await getCode(server, c))).json()) as { refresh_token: string };
    const refresh = async (token: string) =>
      tokenRequest(server, { grant_type: 'refresh_token', refresh_token: token }, basic(c.id, c.secret!));
    return { server, tokens, refresh };
  }

  it('within the reuse interval a rotated token gets the current one without revoking the family; after it, replay revokes', async () => {
    const { server, tokens, refresh } = await setup({ TESSERA_REFRESH_TOKEN_REUSE_INTERVAL: '10' });
    const concurrent = await Promise.all([
      refresh(tokens.refresh_token),
      refresh(tokens.refresh_token),
      refresh(tokens.refresh_token),
    ]);
    assert.deepEqual(
      concurrent.map((r) => r.status),
      [200, 200, 200],
    );
    // One rotation; the requests that lost the race are answered with the token it issued.
    const issued = await Promise.all(
      concurrent.map(async (r) => ((await r.json()) as { refresh_token: string }).refresh_token),
    );
    const newest = issued[0]!;
    assert.deepEqual(issued, [newest, newest, newest]);
    assert.notEqual(newest, tokens.refresh_token);
    server.clock.offset += 5;
    const again = await refresh(tokens.refresh_token);
    assert.equal(again.status, 200, 'still within 10 s');
    assert.equal(((await again.json()) as { refresh_token: string }).refresh_token, newest);
    server.clock.offset += 6;
    assert.equal((await refresh(tokens.refresh_token)).status, 400, 'past the interval: a replay');
    assert.equal((await refresh(newest)).status, 400, 'and the family is revoked');
  });

  it('with the default interval of 0 a concurrent second use revokes the family', async () => {
    const { tokens, refresh } = await setup({});
    const results = await Promise.all([refresh(tokens.refresh_token), refresh(tokens.refresh_token)]);
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 400]);
    const winner = (await results.find((r) => r.status === 200)!.json()) as { refresh_token: string };
    assert.equal((await refresh(winner.refresh_token)).status, 400);
  });

  it('no refresh token outlives the absolute lifetime of its family', async () => {
    const { server, tokens, refresh } = await setup({
      TESSERA_REFRESH_TOKEN_TTL: '100',
      TESSERA_REFRESH_TOKEN_ABSOLUTE_TTL: '150',
    });
    server.clock.offset += 90;
    const second = (await (await refresh(tokens.refresh_token)).json()) as { refresh_token: string };
    server.clock.offset += 61; // 151 s after the grant: the second token's own lifetime (100 s) has not passed
    const response = await refresh(second.refresh_token);
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: string }).error, 'invalid_grant');
  });
});
