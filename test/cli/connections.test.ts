// The operator's commands for agents: `connections create|list|show|update|delete` (each change an
// event, a second connection for the same client and audience refused, a bad value exit 2, an unknown
// id exit 1), and `clients create|update --exchange-audience` with `--no-exchange-audiences`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { commandLine } from '../helpers/cli.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const AUDIENCE = 'https://mcp-as.example.com';

describe('connections and exchange audiences from the command line', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server?.close());

  const { cli, json } = commandLine(() => server);

  it('creates, lists, shows, updates and deletes a connection, each change an event', async () => {
    const client = server.clients.confidential.id;
    const create = ['connections', 'create', '--client', client, '--audience', AUDIENCE, '--remote-client-id', 'agent'];
    const made = await json([...create, '--scope', 'tools.read tools.write', '--resource', 'https://mcp.example.com']);
    assert.equal(made.client_id, client);
    assert.equal(made.scope, 'tools.read tools.write');
    assert.equal((await cli([...create, '--scope', 'tools.read'])).code, 2, 'one per client and audience');
    assert.equal((await cli(['connections', 'create', '--client', client, '--audience', AUDIENCE])).code, 2);
    assert.equal(
      (await cli([...create.slice(0, 4), '--audience', 'nope', '--remote-client-id', 'a', '--scope', 's'])).code,
      2,
    );
    assert.equal(
      (await cli([...create.slice(0, 2), '--client', 'nobody', ...create.slice(4), '--scope', 's'])).code,
      1,
    );

    const listed = (await json(['connections', 'list', '--client', client])) as Array<{ id: string }>;
    assert.deepEqual(
      listed.map((c) => c.id),
      [made.id],
    );
    assert.match((await cli(['connections', 'list'])).out, new RegExp(`${made.id}  ${client}  ${AUDIENCE}`));
    const updated = await json(['connections', 'update', made.id, '--scope', 'tools.read', '--no-resource']);
    assert.equal(updated.scope, 'tools.read');
    assert.equal(updated.resource, null);
    assert.equal((await json(['connections', 'show', made.id])).remote_client_id, 'agent');
    assert.equal((await cli(['connections', 'delete', made.id])).code, 0);
    assert.equal((await cli(['connections', 'show', made.id])).code, 1);
    const types = (await server.store.listEvents({ clientId: client, limit: 10 })).map((e) => e.type);
    for (const type of ['connection.created', 'connection.updated', 'connection.deleted'] as const) {
      assert.ok(types.includes(type), type);
    }
  });

  it('clients create and update --exchange-audience, --no-exchange-audiences', async () => {
    const made = await json([
      ...['clients', 'create', '--name', 'Agent', '--scope', 'apps'],
      ...['--grant-types', 'urn:ietf:params:oauth:grant-type:token-exchange'],
      ...['--exchange-audience', 'https://api.example.com', '--exchange-audience', 'https://b.example.com'],
    ]);
    assert.deepEqual(made.exchange_audiences, ['https://api.example.com', 'https://b.example.com']);
    assert.deepEqual(made.redirect_uris, []);
    const id = made.client_id as string;
    const one = await json(['clients', 'update', id, '--exchange-audience', 'https://c.example.com']);
    assert.deepEqual(one.exchange_audiences, ['https://c.example.com']);
    assert.deepEqual((await json(['clients', 'update', id, '--no-exchange-audiences'])).exchange_audiences, []);
    assert.equal((await cli(['clients', 'update', id, '--exchange-audience', 'not a uri'])).code, 2);
  });
});
