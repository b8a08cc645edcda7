// The README's configuration table lists exactly the options the schema knows.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { it } from 'node:test';
import { configSchema } from '../../src/config/index.ts';

it('every configuration option is documented in the README, and nothing else', async () => {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Register a client'));
  const documented = [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual(documented.sort(), Object.keys(configSchema.shape).sort());
});
