// The admin API as its callers see it: an admin client made with the CLI, as an operator would, its
// client_credentials token, and every answer checked against the OpenAPI document the server serves
// (validated first by @seriousme/openapi-schema-validator; the answers by Ajv with the document's own
// schemas). An answer whose status or media type the document does not list fails the test.
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { run } from '../../src/cli/main.ts';
import { cliIo, type TestServer } from './server.ts';
import { basic, tokenRequest } from './tokens.ts';

export const PREFIX = '/admin/api/v1';

export interface Answer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read field by field, checked against the document
  body: any;
}

type Operation = { responses?: Record<string, { content?: Record<string, { schema: unknown }> }> };

/** The OpenAPI document at `base`, validated, and a check of any answer against it. */
export async function contractOf(base: string) {
  const document = (await (await fetch(`${base}${PREFIX}/openapi.json`)).json()) as {
    openapi: string;
    paths: Record<string, Record<string, Operation>>;
  };
  const result = await new Validator().validate(document as never);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(document, 'openapi');
  const templates = Object.keys(document.paths).map((path) => ({
    path,
    pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
  const checked = new Set<string>();
  return {
    document,
    /** Routes (method and path template) answered at least once, for a check that every one was. */
    checked,
    check(method: string, path: string, answer: Answer): void {
      const bare = path.split('?')[0]!;
      const template = templates.find((t) => t.pattern.test(bare));
      assert.ok(template, `${method} ${bare} is not in the document`);
      const operation = document.paths[template.path]![method.toLowerCase()];
      assert.ok(operation, `${method} ${template.path} is not in the document`);
      checked.add(`${method} ${template.path}`);
      const response = operation.responses?.[String(answer.status)];
      assert.ok(
        response,
        `${method} ${template.path}: status ${answer.status} is not in the document: ${JSON.stringify(answer.body)}`,
      );
      if (answer.status === 204) return;
      const type = (answer.headers.get('content-type') ?? '').split(';')[0]!;
      assert.ok(response.content?.[type], `${method} ${template.path} ${answer.status}: ${type} is not documented`);
      const ref = `openapi#/${pointer('paths', template.path, method.toLowerCase(), 'responses', String(answer.status), 'content', type, 'schema')}`;
      const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
      assert.ok(validate(answer.body), `${method} ${bare} ${answer.status}: ${ajv.errorsText(validate.errors)}`);
    },
  };
}

export type Contract = Awaited<ReturnType<typeof contractOf>>;

/** Runs the CLI against the server's database; its output, or a failed assertion. */
export async function cli(server: TestServer, args: string[], stdin = ''): Promise<string> {
  const { io, lines } = cliIo(server, stdin);
  const code = await run(args, io);
  assert.equal(code, 0, lines.join('\n'));
  return lines.join('\n');
}

/** An admin client made as docs/admin-api.md says, and a client_credentials token of it. */
export async function adminClient(server: TestServer, name = 'admin-tool', extra: string[] = ['--admin']) {
  const args = ['clients', 'create', '--name', name, '--grant-types', 'client_credentials', '--scope', 'admin'];
  const made = JSON.parse(await cli(server, [...args, ...extra, '--json'])) as {
    client_id: string;
    client_secret: string;
  };
  const response = await tokenRequest(
    server,
    { grant_type: 'client_credentials', scope: 'admin' },
    basic(made.client_id, made.client_secret),
  );
  const body = (await response.json()) as { access_token?: string; error?: string };
  return { clientId: made.client_id, secret: made.client_secret, status: response.status, token: body.access_token };
}

/** A caller of the API at `base` with `token`, checking every answer against the contract. */
export function caller(base: string, contract: Contract, token?: string) {
  return async (
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; type?: string; token?: string | null } = {},
  ): Promise<Answer> => {
    const bearer = options.token === undefined ? token : options.token;
    const headers: Record<string, string> = {
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...(options.body !== undefined ? { 'content-type': options.type ?? 'application/json' } : {}),
      ...options.headers,
    };
    const response = await fetch(`${base}${PREFIX}${path}`, {
      method,
      headers,
      ...(options.body !== undefined
        ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) }
        : {}),
    });
    const text = await response.text();
    const answer = { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
    contract.check(method, `${PREFIX}${path}`, answer);
    return answer;
  };
}
