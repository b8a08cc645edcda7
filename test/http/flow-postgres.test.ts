import { after, before, describe, it } from 'node:test';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
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

  it('confidential client with HTTP Basic', { skip: !database && 'PostgreSQL unreachable' }, () => confidentialFlowWithOpenidClient(server));
  it('public client with PKCE S256', { skip: !database && 'PostgreSQL unreachable' }, () => publicFlowWithOpenidClient(server));
});
