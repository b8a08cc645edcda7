// Every relative link in README.md and docs/ leads to a file of the repository, and a link to a section
// (`file.md#section`) to a heading of that file, as GitHub names headings: the reference moves between
// files, and a newcomer following the README must not land nowhere.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

async function anchors(file: string): Promise<Set<string>> {
  const text = (await readFile(file, 'utf8')).replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1]!)));
}

it('every relative link in README.md and docs/ leads somewhere', async () => {
  const pages = ['README.md', ...(await readdir(join(root, 'docs'))).map((f) => join('docs', f))].filter((f) =>
    f.endsWith('.md'),
  );
  const broken: string[] = [];
  for (const page of pages) {
    const text = (await readFile(join(root, page), 'utf8')).replace(/^```[\s\S]*?^```/gm, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue;
      const [path, section] = target!.split('#') as [string, string | undefined];
      const file = path === '' ? join(root, page) : join(root, dirname(page), path);
      if (!existsSync(file)) broken.push(`${page}: ${target} (no ${relative(root, file)})`);
      else if (section !== undefined && !(await anchors(file)).has(section))
        broken.push(`${page}: ${target} (no section "${section}")`);
    }
  }
  assert.deepEqual(broken, []);
});
