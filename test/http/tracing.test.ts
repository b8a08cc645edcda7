// OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT): a server started as npm start starts it sends
// the spans of a request, of its database calls and of its signatures to an OTLP/HTTP receiver this
// test runs (a plain HTTP server taking the exporter's JSON posts), in the trace the request's
// `traceparent` names. Without the setting, nothing of OpenTelemetry's SDK is loaded (its API is, by
// prom-client, as it was before tracing: it stamps exemplars with the current trace, if any).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { loadConfig } from '../../src/config/index.ts';
import { freePort } from '../helpers/server.ts';
import { basic } from '../helpers/tokens.ts';

const START = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start
  .split(' ')
  .slice(1);
const SECRET = 'a-secret-of-at-least-thirty-two-characters';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};

describe('OpenTelemetry traces', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-tracing-'));
  const database = `sqlite:${join(dir, 'tessera.db')}`;
  const received: Array<{ path: string; type: string; body: unknown }> = [];
  let receiver: Server;
  let endpoint: string;
  let service: { client_id: string; client_secret: string };

  before(async () => {
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const type = request.headers['content-type'] ?? '';
        received.push({ path: request.url ?? '', type, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
    // A service (client_credentials) in the database the servers below start on.
    const lines: string[] = [];
    // The standard error has the log lines of the migrations this first command applies.
    const logged: string[] = [];
    const io = {
      env: { DATABASE_URL: database, TESSERA_SECRET: SECRET, NODE_ENV: 'test' },
      out: (line: string) => lines.push(line),
      err: (line: string) => logged.push(line),
      stdin: async () => '',
    };
    const args = ['clients', 'create', '--name', 'Service', '--grant-types', 'client_credentials', '--scope', 'apps'];
    assert.equal(await run([...args, '--json'], io), 0, logged.join('\n'));
    service = JSON.parse(lines.join('\n'));
  });
  after(() => {
    receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the server (with the module recorder), makes a token request and stops it: what it loaded. */
  async function serve(env: Record<string, string>, traceparent: string): Promise<string[]> {
    const port = await freePort();
    const loaded = join(dir, `loaded-${port}`);
    const child = spawn(process.execPath, ['--import', './test/fixtures/loaded-modules.ts', ...START], {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'test',
        TESSERA_ISSUER: `http://127.0.0.1:${port}`,
        DATABASE_URL: database,
        TESSERA_SECRET: SECRET,
        TESSERA_DEMO: 'false',
        LOG_LEVEL: 'warn',
        LOADED_MODULES_LOG: loaded,
        LOADED_MODULES_MATCH: '/@opentelemetry/',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const deadline = Date.now() + 20_000;
      while ((await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status !== 200) {
        assert.ok(Date.now() < deadline && child.exitCode === null, `not ready:\n${output}`);
        await sleep(50);
      }
      const response = await fetch(`http://127.0.0.1:${port}/oauth2/token?not=logged`, {
        method: 'POST',
        headers: {
          authorization: basic(service.client_id, service.client_secret),
          'content-type': 'application/x-www-form-urlencoded',
          traceparent,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'apps' }),
      });
      assert.equal(response.status, 200, await response.clone().text());
    } finally {
      // SIGTERM: the drain, then the exporter sends what it holds.
      child.kill('SIGTERM');
      assert.equal(await exited, 0, output);
    }
    return existsSync(loaded) ? readFileSync(loaded, 'utf8').split('\n').filter(Boolean) : [];
  }

  it('the request, its database calls and its signature are spans of the caller trace', async () => {
    const [traceId, parentId] = [randomBytes(16).toString('hex'), randomBytes(8).toString('hex')];
    const loaded = await serve({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, `00-${traceId}-${parentId}-01`);
    assert.ok(loaded.length > 0, 'OpenTelemetry was loaded');
    assert.ok(received.length > 0, 'the exporter posted to the receiver');
    for (const post of received) {
      assert.equal(post.path, '/v1/traces');
      assert.match(post.type, /application\/json/);
    }
    const batches = received.flatMap(
      (post) =>
        (
          post.body as {
            resourceSpans: Array<{
              resource: { attributes: OtlpSpan['attributes'] };
              scopeSpans: Array<{ spans: OtlpSpan[] }>;
            }>;
          }
        ).resourceSpans,
    );
    const serviceName = batches[0]!.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
    assert.equal(serviceName, 'tessera');
    const spans = batches.flatMap((b) => b.scopeSpans.flatMap((s) => s.spans)).filter((s) => s.traceId === traceId);
    const request = spans.find((s) => s.name === 'POST /oauth2/token');
    assert.ok(request, `spans: ${spans.map((s) => s.name).join(', ')}`);
    assert.equal(request.parentSpanId, parentId, "the caller's span is the request's parent");
    assert.equal(request.kind, 2, 'a server span');
    assert.equal(attribute(request, 'http.response.status_code'), 200);
    assert.equal(attribute(request, 'url.path'), '/oauth2/token', 'no query');
    assert.equal(attribute(request, 'http.route'), '/oauth2/token');

    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const under = (span: OtlpSpan) => {
      for (let parent = byId.get(span.parentSpanId ?? ''); parent; parent = byId.get(parent.parentSpanId ?? ''))
        if (parent === request) return true;
      return false;
    };
    const signing = spans.find((s) => s.name === 'sign at+jwt');
    assert.ok(signing && under(signing), 'the signature is a span of the request');
    assert.match(String(attribute(signing, 'tessera.signing.alg')), /^(RS|ES)256$/);
    const databaseCalls = spans.filter((s) => s.name.startsWith('db ') && under(s));
    assert.ok(databaseCalls.length > 0, 'the database calls are spans of the request');
    for (const call of databaseCalls) assert.equal(attribute(call, 'db.system.name'), 'sqlite');
    assert.doesNotMatch(JSON.stringify(received), /not=logged/, 'no query reaches a span');
  });

  it('an endpoint that is not an http(s) URL is refused at start, naming the setting', () => {
    assert.throws(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), /OTEL_EXPORTER_OTLP_ENDPOINT/);
    assert.equal(loadConfig({}).tracing.endpoint, null);
  });

  it('without OTEL_EXPORTER_OTLP_ENDPOINT nothing of the SDK is loaded, and nothing is sent', async () => {
    const before = received.length;
    const loaded = await serve({}, `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`);
    // Only @opentelemetry/api, and only by prom-client (or by the API itself).
    const ours = loaded.filter((line) => {
      const [importer, module] = line.split(' ') as [string, string];
      const api = /\/@opentelemetry\/api\//;
      return !(api.test(module) && (/\/prom-client\//.test(importer) || api.test(importer)));
    });
    assert.deepEqual(ours, []);
    assert.equal(received.length, before);
  });
});
