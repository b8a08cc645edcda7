// docs/deployment.md's configurations, as the guide writes them, checked by the tools that will read
// them: nginx -t (Debian 12's nginx 1.22), caddy adapt and caddy validate (Debian's Caddy 2.6),
// systemd-analyze verify and systemd-analyze security (an exposure rated "OK" or better). The blocks
// are taken from the guide itself, found by the path each names on its first line. The changes made
// to them: nginx is given a throwaway certificate where the guide names Let's Encrypt's files, and free
// ports on 127.0.0.1 where it listens on 443 and 80 (nginx -t binds them, which takes root, and they
// may be taken); Caddy's instance is a listener of the test's own, which counts what reaches it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
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
  describe("Caddy's configuration", { skip: !caddy && 'caddy is not installed' }, () => {
    const home = join(dir, 'caddy-home');
    const env = { PATH: process.env.PATH, HOME: home, XDG_DATA_HOME: home, XDG_CONFIG_HOME: home };
    /** The guide's Caddyfile with its instance at `address`, and the live upstreams it names. */
    const caddyfile = (address: string) => {
      const file = block('/etc/caddy/Caddyfile');
      assert.deepEqual(
        [...file.matchAll(/^\s*to (.+)$/gm)].map((m) => m[1]),
        ['127.0.0.1:3000'],
      );
      writeFileSync(join(dir, 'Caddyfile'), file.replace('to 127.0.0.1:3000', `to ${address}`));
      return join(dir, 'Caddyfile');
    };
    /** A listener standing in for the instance, counting the connections it gets. */
    const standIn = async () => {
      const server = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      let connections = 0;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      return {
        address: `127.0.0.1:${port}`,
        connections: () => connections,
        close: () => new Promise((resolve) => server.close(resolve)),
      };
    };

    it("passes the guide's check, which connects to no instance", async () => {
      const command = /^caddy adapt --config \/etc\/caddy\/Caddyfile >\/dev\/null && echo valid$/m;
      assert.match(guide, command, 'the guide checks the Caddyfile with caddy adapt');
      const instance = await standIn();
      try {
        // Several times: were it to start the health checks, one of the runs would reach the instance.
        for (let i = 0; i < 5; i++) {
          const { status, output } = run(caddy!, ['adapt', '--config', caddyfile(instance.address)], env);
          assert.equal(status, 0, output);
          assert.doesNotMatch(output, /health_checker/);
        }
        // A connection made would have been taken before the command exited; one more turn of the loop.
        await new Promise((resolve) => setImmediate(resolve));
        assert.equal(instance.connections(), 0);
      } finally {
        await instance.close();
      }
    });

    it('passes caddy validate, which sets its modules up (health checks sent to a stand-in)', async () => {
      const instance = await standIn();
      try {
        const file = caddyfile(instance.address);
        const { status, output } = run(caddy!, ['validate', '--config', file, '--adapter', 'caddyfile'], env);
        assert.equal(status, 0, output);
        assert.match(output, /Valid configuration/);
        assert.doesNotMatch(output, /:3000\b/, 'no probe of port 3000');
      } finally {
        await instance.close();
      }
    });

    it('fails the check on a wrong value', () => {
      const file = caddyfile('127.0.0.1:3000');
      writeFileSync(file, readFileSync(file, 'utf8').replace('health_interval 5s', 'health_interval 5x'));
      const { status, output } = run(caddy!, ['adapt', '--config', file], env);
      assert.notEqual(status, 0);
      assert.match(output, /bad interval value 5x/);
    });
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
