// What the restore tests do through a cluster of instances as its clients and operator would: sign
// in for tokens, refresh and revoke them, read the audit trail with the CLI, wait for a log line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster, Instance } from './instances.ts';
import type { TestServer } from './server.ts';
import { basic, exchange, getCode, tokenRequest } from './tokens.ts';

export interface Tokens {
  access_token: string;
  refresh_token: string;
}

export function cli(env: Record<string, string>, args: string[]): string {
  const result = spawnSync(process.execPath, ['src/cli/main.ts', ...args], {
    env: { PATH: process.env.PATH, ...env, NODE_ENV: 'test' },
    encoding: 'utf8',
  });
  assert.equal(result.status, 0, `tessera ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

export function clusterFlows(cluster: Pick<Cluster, 'issuer' | 'user' | 'clients' | 'env'>) {
  const confidential = cluster.clients.confidential;
  const auth = basic(confidential.id, confidential.secret!);
  const server = { issuer: cluster.issuer, user: cluster.user, clients: cluster.clients } as unknown as TestServer;
  return {
    /** A sign-in and a code exchanged: fresh tokens. */
    async tokens(): Promise<Tokens> {
      const response = await exchange(server, await getCode(server, confidential));
      assert.equal(response.status, 200, await response.clone().text());
      return (await response.json()) as Tokens;
    },
    /** The token endpoint's answer to a refresh: its status and error. */
    async refresh(token: string): Promise<{ status: number; error?: string }> {
      const answer = await tokenRequest(server, { grant_type: 'refresh_token', refresh_token: token }, auth);
      return { status: answer.status, error: ((await answer.json()) as { error?: string }).error };
    },
    async revoke(token: string): Promise<void> {
      const answer = await fetch(`${cluster.issuer}/oauth2/revoke`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }),
      });
      assert.equal(answer.status, 200);
    },
    /** The audit trail's database.restored events, as `tessera events list` shows them. */
    restoredEvents(): Array<{ data: { finished_by: string; detected?: string[] } }> {
      return JSON.parse(cli(cluster.env, ['events', 'list', '--type', 'database.restored', '--json']));
    },
  };
}

/** Waits until `instance` printed a line that contains `text`; the line, parsed. */
export async function logLine(instance: Instance, text: string, ms = 20_000): Promise<Record<string, unknown>> {
  for (const until = Date.now() + ms; ;) {
    const line = instance
      .output()
      .split('\n')
      .find((l) => l.includes(text));
    if (line) return JSON.parse(line) as Record<string, unknown>;
    assert.ok(Date.now() < until, `no line with "${text}" in: ${instance.output()}`);
    await sleep(50);
  }
}
