// docs/endpoints.md's "Not supported yet" says what the server really lacks: each item is checked
// against the discovery document (or a request), and the list holds exactly the items checked here,
// so that a feature added takes its line away and a line left behind fails.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

type Metadata = Record<string, unknown>;

const page = await readFile(new URL('../../docs/endpoints.md', import.meta.url), 'utf8');
const section = page.slice(page.indexOf('## Not supported yet'));
const listed = [...section.matchAll(/^- (.+?)[;.]$/gm)].map((m) => m[1]!);

describe("docs/endpoints.md's list of what is not supported", () => {
  let server: TestServer;
  let metadata: Metadata;
  before(async () => {
    server = await startServer();
    metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Metadata;
  });
  after(() => server?.close());

  const has = (field: string, value: string) => ((metadata[field] as string[] | undefined) ?? []).includes(value);

  const checks: Record<string, () => Promise<void> | void> = {
    "request objects by reference (a `request_uri` of the client's) and signed with HMAC": () => {
      assert.equal(metadata.request_uri_parameter_supported, false);
      const algs = (metadata.request_object_signing_alg_values_supported as string[] | undefined) ?? [];
      assert.equal(
        algs.some((alg) => alg.startsWith('HS')),
        false,
      );
    },
    'mutual-TLS sender constraints': () => {
      assert.equal(metadata.tls_client_certificate_bound_access_tokens, undefined);
    },
    'the implicit and hybrid flows': () => {
      assert.deepEqual(metadata.response_types_supported, ['code']);
      assert.equal(has('grant_types_supported', 'implicit'), false);
    },
    'pairwise subject identifiers': () => {
      assert.deepEqual(metadata.subject_types_supported, ['public']);
    },
    'several resources in one request': async () => {
      const client = server.clients.confidential;
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: client.id,
        redirect_uri: client.redirectUri,
        scope: 'openid',
        state: 's',
      });
      query.append('resource', 'https://api.example.com/one');
      query.append('resource', 'https://api.example.com/two');
      const answer = await fetch(`${server.issuer}/oauth2/authorize?${query}`, { redirect: 'manual' });
      assert.equal(answer.status, 302);
      const location = new URL(answer.headers.get('location')!);
      assert.equal(location.searchParams.get('error'), 'invalid_target');
    },
  };

  it('lists exactly the items checked here', () => {
    assert.deepEqual(listed, Object.keys(checks));
  });

  it('names nothing Tessera has: passkeys, second factors, sign-up, secret rotation, PAR, private_key_jwt', () => {
    const list = listed.join('\n');
    const had = [/passkey/i, /multi-factor|second factor/i, /regist|sign-up|signup/i, /TESSERA_SECRET/];
    for (const feature of [...had, /pushed authorization|\bPAR\b/, /private_key_jwt/])
      assert.doesNotMatch(list, feature);
  });

  for (const [item, check] of Object.entries(checks)) it(`lacks ${item}`, check);
});
