// The operator's commands for roles: `users create --role --admin`, `users update --role --no-role
// --admin --no-admin` (each change a `user.roles_changed` event), role names checked, `users show` and
// `list` showing them; `clients create|update --admin|--no-admin` and `clients update --roles a,b`
// (`--all-roles` back to every role), shown by `clients show` and `list`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { commandLine } from '../helpers/cli.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

describe('roles from the command line', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server?.close());

  const { cli, json } = commandLine(() => server);

  it('users create gives roles, --admin the admin role; show and list say them', async () => {
    const made = await cli([
      ...['users', 'create', '--username', 'carol', '--email', 'carol@example.com'],
      ...['--role', 'editor', '--role', 'team:blue', '--admin'],
    ]);
    assert.equal(made.code, 0, made.out);
    assert.match(made.out, /created user carol .* with roles editor team:blue admin/);
    assert.deepEqual((await json(['users', 'show', 'carol'])).roles, ['editor', 'team:blue', 'admin']);
    assert.match((await cli(['users', 'show', 'carol'])).out, /^roles +editor team:blue admin$/m);
    const listed = (await json(['users', 'list'])) as Array<{ username: string; roles: string[] }>;
    assert.deepEqual(listed.find((u) => u.username === 'carol')?.roles, ['editor', 'team:blue', 'admin']);
    assert.deepEqual(listed.find((u) => u.username === 'alice')?.roles, []);
    assert.match((await cli(['users', 'list'])).out, /carol .*\[editor team:blue admin\]/);
    const [created] = await server.store.listEvents({
      type: 'user.created',
      userId: (await json(['users', 'show', 'carol'])).id,
    });
    assert.deepEqual(created?.data, { roles: ['editor', 'team:blue', 'admin'] });
  });

  it('users update gives and takes roles away, each change an event with what was added and removed', async () => {
    const updated = await json(['users', 'update', 'alice', '--role', 'viewer', '--role', 'ops', '--admin']);
    assert.deepEqual(updated.roles, ['viewer', 'ops', 'admin']);
    assert.deepEqual(updated.changed, ['roles']);
    const taken = await cli(['users', 'update', 'alice', '--no-role', 'ops', '--no-admin', '--role', 'viewer']);
    assert.equal(taken.code, 0, taken.out);
    assert.match(taken.out, /alice: roles taken away: ops admin/);
    assert.deepEqual((await json(['users', 'show', 'alice'])).roles, ['viewer']);
    // Nothing to change: no event.
    assert.match((await cli(['users', 'update', 'alice', '--role', 'viewer'])).out, /alice: nothing to change/);
    const events = (await json(['events', 'list', '--type', 'user.roles_changed', '--user', 'alice'])) as Array<{
      data: { added: string[]; removed: string[]; roles: string[] };
      actor: string | null;
    }>;
    // The command line's changes name it as their actor.
    assert.deepEqual(
      events.map((e) => e.actor),
      ['cli', 'cli'],
    );
    assert.deepEqual(
      events.map((e) => e.data),
      [
        { added: [], removed: ['ops', 'admin'], roles: ['viewer'] },
        { added: ['viewer', 'ops', 'admin'], removed: [], roles: ['viewer', 'ops', 'admin'] },
      ],
    );
    // A profile change and a role in one command.
    const both = await json(['users', 'update', 'alice', '--name', 'Alice L.', '--role', 'reader']);
    assert.deepEqual(both.changed, ['name', 'roles']);
    assert.deepEqual(both.roles, ['viewer', 'reader']);
  });

  it('refuses a bad role name, and a role given and taken away at once', async () => {
    for (const bad of ['Editor', 'has space', 'x'.repeat(65), '']) {
      const refused = await cli(['users', 'update', 'alice', '--role', bad]);
      assert.equal(refused.code, 2, `${bad}: ${refused.out}`);
      assert.match(refused.out, /--role: .* is not a role name/);
    }
    const created = await cli(['users', 'create', '--username', 'dan', '--email', 'dan@example.com', '--role', 'Bad']);
    assert.equal(created.code, 2, created.out);
    assert.equal((await cli(['users', 'show', 'dan'])).code, 1, 'no user was created');
    const both = await cli(['users', 'update', 'alice', '--role', 'ops', '--no-role', 'ops']);
    assert.equal(both.code, 2, both.out);
    assert.match(both.out, /ops: given and taken away at once/);
    assert.equal((await cli(['clients', 'update', server.clients.confidential.id, '--roles', 'a,B'])).code, 2);
  });

  it('clients create|update --admin|--no-admin and --roles, shown by show and list', async () => {
    const made = await json([
      ...['clients', 'create', '--name', 'Console', '--grant-types', 'client_credentials'],
      ...['--scope', 'admin', '--admin'],
    ]);
    assert.equal(made.admin, true);
    assert.equal(made.roles, null);
    const id = made.client_id as string;
    const limited = await json(['clients', 'update', id, '--roles', 'editor, ops', '--no-admin']);
    assert.equal(limited.admin, false);
    assert.deepEqual(limited.roles, ['editor', 'ops']);
    assert.deepEqual((await json(['clients', 'show', id])).roles, ['editor', 'ops']);
    assert.match((await cli(['clients', 'show', id])).out, /^roles +editor ops$/m);
    assert.match((await cli(['clients', 'list'])).out, new RegExp(`${id} .*Console  \\[roles: editor ops\\]`));
    const back = await json(['clients', 'update', id, '--all-roles', '--admin']);
    assert.equal(back.admin, true);
    assert.equal(back.roles, null);
    assert.match((await cli(['clients', 'list'])).out, new RegExp(`${id} .*Console  \\(admin\\)`));
    assert.match((await cli(['clients', 'show', id])).out, /^roles +\(every role\)$/m);
    const events = await server.store.listEvents({ type: 'client.updated', clientId: id });
    assert.deepEqual(
      events.map((e) => [e.data?.admin, e.data?.roles]),
      [
        [true, 'all'],
        [false, ['editor', 'ops']],
      ],
    );
  });
});
