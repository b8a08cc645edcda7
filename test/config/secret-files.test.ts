// Secret settings from files (NAME_FILE) and TESSERA_SECRET_PREVIOUS: one mechanism for every setting
// that holds a secret, strict about what it reads.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, FILE_SETTINGS, loadConfig, unknownSettings } from '../../src/config/index.ts';
import { resolveSecret } from '../../src/config/secret.ts';

describe('secret settings from files', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-config-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const file = async (name: string, contents: string) => {
    const path = join(dir, name);
    await writeFile(path, contents, { mode: 0o600 });
    return path;
  };

  it('every setting that holds a secret may come from NAME_FILE', () => {
    assert.deepEqual([...FILE_SETTINGS].sort(), [
      'DATABASE_URL',
      'TESSERA_METRICS_TOKEN',
      'TESSERA_SECRET',
      'TESSERA_SECRET_PREVIOUS',
      'TESSERA_SMTP_PASSWORD',
      'TESSERA_SMTP_URL',
    ]);
  });

  it('reads each from its file, without the final newline', async () => {
    const secret = 'a'.repeat(40);
    const previous = `${'b'.repeat(40)}, ${'c'.repeat(40)}`;
    const config = loadConfig({
      TESSERA_SECRET_FILE: await file('secret', `${secret}\n`),
      TESSERA_SECRET_PREVIOUS_FILE: await file('previous', `${previous}\r\n`),
      TESSERA_METRICS_TOKEN_FILE: await file('metrics', 'metrics-token-0123456789'),
      DATABASE_URL_FILE: await file('url', 'postgres://tessera:p%26ss@db.example:5432/tessera?sslmode=require&x=1\n'),
      TESSERA_SMTP_URL_FILE: await file('smtp', 'smtps://tessera:s%40cret@mail.example:465\n'),
      TESSERA_SMTP_PASSWORD_FILE: await file('smtp-password', 'another secret\n'),
    });
    assert.equal(config.secret, secret);
    assert.deepEqual(config.previousSecrets, ['b'.repeat(40), 'c'.repeat(40)]);
    assert.equal(config.metrics.token, 'metrics-token-0123456789');
    assert.equal(config.databaseUrl, 'postgres://tessera:p%26ss@db.example:5432/tessera?sslmode=require&x=1');
    assert.deepEqual(config.mail.smtp, {
      url: 'smtps://tessera:s%40cret@mail.example:465',
      password: 'another secret',
    });
    assert.equal(config.mail.mode, 'smtp');
    assert.deepEqual(await resolveSecret(config), [secret, 'b'.repeat(40), 'c'.repeat(40)]);
    assert.deepEqual(
      unknownSettings({ TESSERA_SECRET_FILE: 'x', TESSERA_SECRET_PREVIOUS_FILE: 'y', TESSERA_ISSUER_FILE: 'z' }),
      [
        'TESSERA_ISSUER_FILE is ignored: TESSERA_ISSUER holds no secret; only DATABASE_URL, TESSERA_SECRET, ' +
          'TESSERA_SECRET_PREVIOUS, TESSERA_METRICS_TOKEN, TESSERA_SMTP_URL, TESSERA_SMTP_PASSWORD are read from files',
      ],
      'only the secret settings have a _FILE form',
    );
  });

  it('refuses both forms at once, a file it cannot read, an empty file, and what the setting refuses', async () => {
    const secretFile = await file('s2', 'a'.repeat(40));
    const refused = (env: Record<string, string>, message: RegExp) =>
      assert.throws(
        () => loadConfig(env),
        (err: Error) => err instanceof ConfigError && message.test(err.message),
      );
    refused({ TESSERA_SECRET: 'a'.repeat(40), TESSERA_SECRET_FILE: secretFile }, /both set/);
    refused({ TESSERA_SECRET_FILE: join(dir, 'missing') }, /TESSERA_SECRET_FILE: cannot read .*ENOENT/);
    refused({ TESSERA_SECRET_FILE: await file('empty', '\n') }, /TESSERA_SECRET_FILE: .* is empty/);
    refused({ TESSERA_SECRET_FILE: await file('short', 'short\n') }, /TESSERA_SECRET: .*32/);
    refused({ TESSERA_SECRET_PREVIOUS: `${'b'.repeat(40)},short` }, /TESSERA_SECRET_PREVIOUS: each secret/);
  });

  it('without TESSERA_SECRET_PREVIOUS the keyring is the secret alone', async () => {
    const config = loadConfig({ TESSERA_SECRET: 'a'.repeat(40) });
    assert.deepEqual(config.previousSecrets, []);
    assert.deepEqual(await resolveSecret(config), ['a'.repeat(40)]);
  });
});
