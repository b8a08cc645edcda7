// docs/deployment.md's configurations, as the guide writes them, checked by the tools that will read
// them: nginx -t (Debian 12's nginx 1.22), caddy validate (Debian's Caddy 2.6), systemd-analyze verify
// and systemd-analyze security (an exposure rated "OK" or better). The blocks are taken from the guide
// itself, found by the path each names on its first line. The changes made to them: nginx is given a
// throwaway certificate where the guide names Let's Encrypt's files, and free ports on 127.0.0.1 where
// it listens on 443 and 80 (nginx -t binds them, which takes root, and they may be taken).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { EXIT_SETTINGS } from '../../src/config/index.ts';
import { freePort } from '../helpers/server.ts';
import { createThrowawayCa } from '../helpers/tls.ts';

const guide = readFileSync(new URL('../../docs/deployment.md', import.meta.url), 'utf8');

/** The fenced block whose first line is `# <path>`: the file the guide tells the operator to write. */
function block(path: string): string {
  for (const [, text] of guide.matchAll(/^```\w*\n([\s\S]*?)^```/gm)) {
    if (text!.startsWith(`# ${path}\n`)) return text!;
  }
  assert.fail(`docs/deployment.md has no block for ${path}`);
}

/** The tool's path (sbin is not on every user's PATH), or a skip reason; under CI its absence fails. */
function tool(name: string, ...candidates: string[]): string | undefined {
  const found = candidates.find((c) => existsSync(c));
  if (!found && process.env.CI === 'true') throw new Error(`${name} is required under CI (.ci/run installs it)`);
  return found;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  const result = spawnSync(command, args, { encoding: 'utf8', env, timeout: 60_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('the guide as written', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-guides-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const nginx = tool('nginx', '/usr/sbin/nginx');
  it("nginx's configuration passes nginx -t", { skip: !nginx && 'nginx is not installed' }, async () => {
    const site = block('/etc/nginx/sites-available/tessera');
    const ca = await createThrowawayCa(dir);
    let certified = site
      .replace('/etc/letsencrypt/live/id.example.com/fullchain.pem', join(dir, 'server.pem'))
      .replace('/etc/letsencrypt/live/id.example.com/privkey.pem', join(dir, 'server-key.pem'));
    assert.notEqual(certified, site);
    // The directives, not the comments that mention them.
    for (const address of ['443', '[::]:443', '80', '[::]:80']) {
      const directive = new RegExp(`^(\\s*)listen ${address.replace(/[[\]]/g, '\\$&')}(?=[ ;])`, 'm');
      assert.match(certified, directive);
      certified = certified.replace(directive, `$1listen 127.0.0.1:${await freePort()}`);
    }
    assert.doesNotMatch(certified, /^\s*listen (?!127\.0\.0\.1:)/m);
    assert.ok(ca.cert.length > 0);
    writeFileSync(join(dir, 'tessera.conf'), certified);
    // As Debian's nginx.conf includes sites-enabled: inside http {}. Logs and temporary files in the
    // test's folder, so that nginx -t needs no root.
    const temp = join(dir, 'nginx-temp');
    mkdirSync(temp);
    const paths = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${temp}/${t};`);
    writeFileSync(
      join(dir, 'nginx.conf'),
      `pid ${dir}/nginx.pid;\nevents {}\nhttp {\n access_log off;\n ${paths.join('\n ')}\n include ${dir}/tessera.conf;\n}\n`,
    );
    const { status, output } = run(nginx!, ['-t', '-e', 'stderr', '-p', dir, '-c', join(dir, 'nginx.conf')]);
    assert.equal(status, 0, output);
    assert.match(output, /test is successful/);
  });

  const caddy = tool('caddy', '/usr/bin/caddy');
  it("Caddy's configuration passes caddy validate", { skip: !caddy && 'caddy is not installed' }, () => {
    writeFileSync(join(dir, 'Caddyfile'), block('/etc/caddy/Caddyfile'));
    const home = join(dir, 'caddy-home');
    const env = { PATH: process.env.PATH, HOME: home, XDG_DATA_HOME: home, XDG_CONFIG_HOME: home };
    const { status, output } = run(
      caddy!,
      ['validate', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'],
      env,
    );
    assert.equal(status, 0, output);
    assert.match(output, /Valid configuration/);
  });

  const analyze = tool('systemd-analyze', '/usr/bin/systemd-analyze');
  describe('the systemd units', { skip: !analyze && 'systemd-analyze is not installed' }, () => {
    const units = join(dir, 'units');
    const service = join(units, 'tessera.service');
    const socket = join(units, 'tessera.socket');
    if (analyze) {
      mkdirSync(units);
      // The guide installs Node.js 24 as /usr/bin/node; where this machine has none, verify would say
      // only that, so it is given the Node.js the tests run on instead.
      const unit = block('/etc/systemd/system/tessera.service');
      writeFileSync(service, existsSync('/usr/bin/node') ? unit : unit.replace('/usr/bin/node', process.execPath));
      writeFileSync(socket, block('/etc/systemd/system/tessera.socket'));
    }

    it('pass systemd-analyze verify, without a warning', () => {
      const { status, output } = run(analyze!, ['verify', '--man=no', socket, service]);
      assert.equal(status, 0, output);
      assert.equal(output.trim(), '');
    });

    it('the service is not restarted after a settings error, which exits with its own status', () => {
      const unit = readFileSync(service, 'utf8');
      assert.match(unit, /^Restart=on-failure$/m);
      // The status src/main.ts exits with for a ConfigError (test/http/request-logs.test.ts runs it).
      assert.match(unit, new RegExp(`^RestartPreventExitStatus=${EXIT_SETTINGS}$`, 'm'));
    });

    it('the service is rated "OK" or better by systemd-analyze security', () => {
      const { status, output } = run(analyze!, ['security', '--offline=true', service]);
      assert.equal(status, 0, output);
      const [, exposure, rating] = /Overall exposure level for tessera\.service: ([\d.]+) (\w+)/.exec(output) ?? [];
      assert.ok(['PERFECT', 'SAFE', 'OK'].includes(rating!), `rated ${exposure} ${rating}:\n${output}`);
      // The settings the issue named, each rated as in effect.
      for (const setting of ['SystemCallFilter=~@privileged', 'RestrictAddressFamilies=~AF_PACKET', 'UMask=']) {
        assert.match(output, new RegExp(`✓ ${setting.replace(/[~@=]/g, (c) => `\\${c}`)}`), setting);
      }
    });
  });
});
