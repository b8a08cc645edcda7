// `tessera check`: one line per part of the deployment with its verdict (src/admin/check.ts), and the
// exit status for scripts: 0 when nothing failed, 1 when something did. It changes nothing.
import { checkDeployment } from '../../admin/check.ts';
import { type Io, JSON_OPTION, parse } from './common.ts';

const WORD = { ok: 'ok  ', fail: 'FAIL', skip: 'skip' } as const;

export async function checkCommand(args: string[], io: Io): Promise<number> {
  const { values } = parse(args, JSON_OPTION);
  const verdicts = await checkDeployment(io.env);
  if (values.json) io.out(JSON.stringify(verdicts, null, 2));
  else for (const v of verdicts) io.out(`${WORD[v.status]}  ${v.check}: ${v.detail}`);
  return verdicts.some((v) => v.status === 'fail') ? 1 : 0;
}
