// Every entry point checks the Node.js it runs on before loading any TypeScript (bin/check-node.cjs):
// on an older one, `npm start`, `npm test` and `tessera` exit at once with one short message saying
// what was found, what is needed and the two ways out; on the pinned Node.js they run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';

const OLD_NODE = '/usr/bin/node';
const oldVersion = existsSync(OLD_NODE)
  ? spawnSync(OLD_NODE, ['-p', 'process.versions.node']).stdout.toString().trim()
  : '';
const older = oldVersion !== '' && Number(oldVersion.split('.')[0]) < 24;
if (!older && process.env.CI === 'true') throw new Error(`CI needs an older Node.js at ${OLD_NODE} for this test`);
const skip = older ? false : `no Node.js older than 24 at ${OLD_NODE}`;

function run(command: string, args: string[], options: { cwd?: string; path?: string } = {}) {
  const env = { ...process.env, PATH: options.path ?? process.env.PATH, CI: '' };
  const result = spawnSync(command, args, {
    cwd: options.cwd ?? process.cwd(),
    env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

function assertRefused(output: string): void {
  const message = output.split('\n').filter((line) => line.startsWith('tessera:') || line.startsWith('  '));
  assert.match(
    output,
    new RegExp(`this is Node\\.js ${oldVersion.replace(/\./g, '\\.')}; Tessera needs Node\\.js 24\\.7 or later`),
  );
  assert.match(output, /npm install-scripts approve node && npm rebuild node/);
  assert.match(output, /install Node\.js 24/);
  assert.doesNotMatch(output, /ERR_UNKNOWN_FILE_EXTENSION/);
  assert.doesNotMatch(output, /^\s+at /m, 'no stack trace');
  assert.ok(message.length <= 5, output);
}

describe('the Node.js check', () => {
  // A checkout whose pinned Node.js was not installed (npm ci --ignore-scripts): no node_modules/.bin/node,
  // so npm's scripts run on the first `node` of the PATH, the machine's own.
  const project = mkdtempSync(join(tmpdir(), 'tessera-node-'));
  copyFileSync('package.json', join(project, 'package.json'));
  for (const dir of ['bin', 'src', 'test']) symlinkSync(resolve(dir), join(project, dir));
  const oldPath = `/usr/bin:/bin`;
  after(() => rmSync(project, { recursive: true, force: true }));

  it('npm start on an older Node.js exits at once with the message', { skip }, () => {
    const { code, output } = run('npm', ['start'], { cwd: project, path: oldPath });
    assert.notEqual(code, 0);
    assertRefused(output);
  });

  it('npm test on an older Node.js exits at once with the message', { skip }, () => {
    const { code, output } = run('npm', ['test'], { cwd: project, path: oldPath });
    assert.notEqual(code, 0);
    assertRefused(output);
  });

  it('the tessera command on an older Node.js exits with the message', { skip }, () => {
    const { code, output } = run(OLD_NODE, ['bin/tessera.js', 'clients', 'list']);
    assert.equal(code, 1);
    assertRefused(output);
  });

  it('on the pinned Node.js the entry points run', () => {
    assert.equal(
      run(process.execPath, ['-r', './bin/check-node.cjs', '-e', 'process.stdout.write("ran")']).output,
      'ran',
    );
    const help = run(process.execPath, ['bin/tessera.js', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.output, /^Usage: tessera/);
  });
});
