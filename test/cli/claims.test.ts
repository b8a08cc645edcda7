// `tessera users create|update` set and clear a user's standard claims (OIDC Core §5.1), refusing
// values that cannot be them with what they must be.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { parseHeldClaims } from '../../src/tokens/held-claims.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';

describe('tessera users: standard claims', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  async function cli(...args: string[]): Promise<{ code: number; out: string }> {
    const { io, lines } = cliIo(server);
    const code = await run(args, io);
    return { code, out: lines.join('\n') };
  }
  const claimsOf = async (username: string) =>
    parseHeldClaims((await server.store.getUserByUsername(username))!.claims);

  it('create sets them; update changes, verifies and clears them', async () => {
    const created = await cli(
      'users',
      'create',
      '--username',
      'bob',
      '--email',
      'bob@example.com',
      '--middle-name',
      'Q',
      '--website',
      'https://bob.example',
      '--gender',
      'male',
      '--birthdate',
      '0000-02-29',
    );
    assert.equal(created.code, 0, created.out);
    assert.deepEqual(await claimsOf('bob'), {
      middle_name: 'Q',
      website: 'https://bob.example',
      gender: 'male',
      birthdate: '0000-02-29',
    });

    const updated = await cli(
      'users',
      'update',
      'bob',
      '--phone-number',
      '+1 (555) 010-0000',
      '--phone-number-verified',
      '--address',
      '{"formatted":"1 Main St\\nSpringfield"}',
      '--locale',
      'fr-CA',
      '--json',
    );
    assert.equal(updated.code, 0, updated.out);
    const answer = JSON.parse(updated.out) as { claims: Record<string, unknown>; changed: string[] };
    assert.deepEqual(answer.changed, ['locale', 'phone_number', 'address', 'phone_number_verified']);
    assert.equal(answer.claims.phone_number, '+15550100000');
    assert.equal(answer.claims.phone_number_verified, true);

    // A new number is unverified again; an empty value and --clear remove claims.
    assert.equal((await cli('users', 'update', 'bob', '--phone-number', '+15550100001')).code, 0);
    assert.equal((await claimsOf('bob')).phone_number_verified, undefined);
    const cleared = await cli('users', 'update', 'bob', '--gender', '', '--clear', 'address,middle-name');
    assert.equal(cleared.code, 0, cleared.out);
    assert.match(cleared.out, /updated bob: middle_name, gender, address/);
    assert.deepEqual(await claimsOf('bob'), {
      website: 'https://bob.example',
      birthdate: '0000-02-29',
      locale: 'fr-CA',
      phone_number: '+15550100001',
    });
    const events = await server.store.listEvents({ type: 'user.updated', limit: 1 });
    assert.deepEqual(events[0]!.data?.changed, ['middle_name', 'gender', 'address']);
  });

  for (const [option, value, says] of [
    ['--picture', 'javascript:alert(1)', /--picture: an http or https URL/],
    ['--birthdate', '1999-02-30', /--birthdate: a year \(YYYY\) or a date/],
    ['--zoneinfo', 'Mars/Olympus', /--zoneinfo: a time zone of the IANA database/],
    ['--locale', 'not a tag', /--locale: a BCP 47 language tag/],
    ['--phone-number', '555-0100', /--phone-number: an international number/],
    ['--nickname', 'x'.repeat(257), /--nickname: at most 256 characters/],
    ['--address', '{"planet":"Mars"}', /--address: no member planet/],
    ['--address', 'not json', /--address: a JSON object/],
    ['--clear', 'shoe_size', /--clear: one of/],
  ] as const) {
    it(`refuses ${option} ${value.slice(0, 20)}`, async () => {
      const before = (await server.store.getUserByUsername('alice'))!;
      const refused = await cli('users', 'update', 'alice', option, value);
      assert.equal(refused.code, 2, refused.out);
      assert.match(refused.out, says);
      assert.deepEqual(await server.store.getUserByUsername('alice'), before);
    });
  }

  it('refuses to verify a phone number the user does not have', async () => {
    const refused = await cli('users', 'update', 'alice', '--phone-number-verified');
    assert.equal(refused.code, 2);
    assert.match(refused.out, /--phone-number-verified: there is no phone number to verify/);
  });
});
