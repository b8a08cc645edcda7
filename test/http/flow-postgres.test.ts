import { after, before, describe, it } from 'node:test';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import assert from 'node:assert/strict';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';
import { confidentialFlowWithOpenidClient, publicFlowWithOpenidClient } from './flows.ts';

describe('authorization code flow with openid-client (PostgreSQL)', async () => {
  const database: TestDatabase | undefined = await withPostgresDatabase();
  let server: TestServer;
  before(async () => {
    if (database) server = await startServer({ databaseUrl: database.url });
  });
  after(async () => {
    await server?.close();
    await database?.drop();
  });

  it('confidential client with HTTP Basic', { skip: !database && 'PostgreSQL unreachable' }, () =>
    confidentialFlowWithOpenidClient(server),
  );
  it('public client with PKCE S256', { skip: !database && 'PostgreSQL unreachable' }, () =>
    publicFlowWithOpenidClient(server),
  );

  // On PostgreSQL a valid refresh is one statement (Store.rotateTokenFamily); what it refuses is read
  // again and gets the same answers as on SQLite.
  it(
    'refresh: rotation, then a replay revokes the family; another client and a disabled user are refused',
    { skip: !database && 'PostgreSQL unreachable' },
    async () => {
      const c = server.clients.confidential;
      const refresh = (token: string, auth = basic(c.id, c.secret!)) =>
        tokenRequest(server, { grant_type: 'refresh_token', refresh_token: token }, auth);
      const error = async (response: Response) => ({
        status: response.status,
        ...((await response.json()) as { error: string; error_description: string }),
      });
      const first = (await (await exchange(server, await getCode(server, c))).json()) as { refresh_token: string };
      const second = (await (await refresh(first.refresh_token)).json()) as {
        refresh_token: string;
        id_token: string;
        scope: string;
      };
      assert.equal(second.scope, 'openid profile email');
      assert.equal(
        JSON.parse(Buffer.from(second.id_token.split('.')[1]!, 'base64url').toString()).email,
        'alice@example.com',
      );
      const p = server.clients.public;
      assert.equal(
        (
          await error(
            await tokenRequest(server, {
              grant_type: 'refresh_token',
              refresh_token: second.refresh_token,
              client_id: p.id,
            }),
          )
        ).error,
        'invalid_grant',
      );
      const now = Math.floor(Date.now() / 1000) + server.clock.offset;
      await server.store.setUserDisabled(server.user.id, true, now);
      try {
        assert.deepEqual(await error(await refresh(second.refresh_token)), {
          status: 400,
          error: 'invalid_grant',
          error_description: 'the user is no longer active',
        });
      } finally {
        await server.store.setUserDisabled(server.user.id, false, now);
      }
      const third = (await (await refresh(second.refresh_token)).json()) as { refresh_token: string };
      assert.deepEqual(await error(await refresh(first.refresh_token)), {
        status: 400,
        error: 'invalid_grant',
        error_description: 'the refresh token has already been used',
      });
      assert.deepEqual(await error(await refresh(third.refresh_token)), {
        status: 400,
        error: 'invalid_grant',
        error_description: 'the refresh token has been revoked',
      });
    },
  );
});
