// The `tessera` command run in-process against a test server: its exit code and output, or its
// `--json` output parsed once the command succeeded.
import assert from 'node:assert/strict';
import { run } from '../../src/cli/main.ts';
import { cliIo, type TestServer } from './server.ts';

/** `server` is asked for at each command (a suite's server is made in its `before`); `env` is added to its settings. */
export function commandLine(server: () => TestServer, env: Record<string, string> = {}) {
  const cli = async (args: string[]) => {
    const { io, lines } = cliIo(server());
    const code = await run(args, { ...io, env: { ...io.env, ...env } });
    return { code, out: lines.join('\n') };
  };
  const json = async (args: string[]) => {
    const { code, out } = await cli([...args, '--json']);
    assert.equal(code, 0, out);
    return JSON.parse(out);
  };
  return { cli, json };
}
