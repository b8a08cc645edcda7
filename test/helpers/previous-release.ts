// The previous release's code, to run beside this one: a git worktree of the commit that
// release/previous.json names (the commit, not the tag: tags need not survive a clone, main's history
// does), with its own production dependencies, run on this repository's Node.js. Missing (a shallow
// clone, a copy without .git), it is skipped with the reason printed; under CI=true it is a failure.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PreviousRelease {
  version: string;
  commit: string;
  /** The worktree: start it with startInstance(env, port, { cwd: dir }). */
  dir: string;
  /** Removes the worktree and its folder. */
  remove(): Promise<void>;
}

/** What release/previous.json names: the release before this one, and its commit on main. */
export function previousRelease(): { version: string; commit: string } {
  return JSON.parse(readFileSync('release/previous.json', 'utf8')) as { version: string; commit: string };
}

/** Whether the commit is in this clone; undefined when it is, else why not. */
export async function missingCommit(commit: string): Promise<string | undefined> {
  try {
    await run('git', ['cat-file', '-e', `${commit}^{commit}`]);
    return undefined;
  } catch (err) {
    const shallow = await run('git', ['rev-parse', '--is-shallow-repository']).then(
      (r) => r.stdout.trim() === 'true',
      () => false,
    );
    return (
      `the previous release's commit ${commit} (release/previous.json) is not in this clone` +
      (shallow
        ? ': it is a shallow clone; fetch the history (git fetch --unshallow, or actions/checkout with fetch-depth: 0)'
        : `: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`)
    );
  }
}

/** Skips (returns undefined, the reason printed) or fails under CI=true when the commit is missing. */
export async function unlessMissing(commit: string): Promise<true | undefined> {
  const missing = await missingCommit(commit);
  if (missing === undefined) return true;
  if (process.env.CI === 'true') throw new Error(`${missing} (required under CI)`);
  console.warn(`skipping: ${missing}`);
  return undefined;
}

/** Checks the previous release out into a temporary folder and installs its dependencies there. */
export async function checkoutPreviousRelease(): Promise<PreviousRelease | undefined> {
  const { version, commit } = previousRelease();
  if (!(await unlessMissing(commit))) return undefined;
  const parent = await mkdtemp(join(tmpdir(), 'tessera-previous-'));
  const dir = join(parent, `tessera-${version}`);
  let added = false;
  const remove = async () => {
    if (added) await run('git', ['worktree', 'remove', '--force', dir]).catch(() => undefined);
    await rm(parent, { recursive: true, force: true });
  };
  try {
    await run('git', ['worktree', 'add', '--detach', dir, commit]);
    added = true;
    // Its own dependencies, as its package-lock.json has them; production ones only (it runs on our
    // Node.js, so not even the `node` package), from npm's cache where it can.
    await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: dir,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    await remove();
    throw new Error(`cannot prepare release ${version} (${commit}): ${(err as Error).message}`, { cause: err });
  }
  return { version, commit, dir, remove };
}
