// docs/configuration.md's table lists exactly the options the configuration schema knows.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { it } from 'node:test';
import { configSchema, FILE_SETTINGS } from '../../src/config/index.ts';

it('every configuration option is documented in docs/configuration.md, and nothing else', async () => {
  const page = await readFile(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  const documented = [...page.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual(documented.sort(), Object.keys(configSchema.shape).sort());
});

it('docs/configuration.md names every setting that may be read from a file, and no other', async () => {
  const page = await readFile(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  const section = page.slice(page.indexOf('## Secrets in files'));
  const named = [...section.matchAll(/`((?:TESSERA|DATABASE)_[A-Z_]+)_FILE`/g)].map((m) => m[1]);
  assert.deepEqual(named.sort(), [...FILE_SETTINGS].sort());
});
