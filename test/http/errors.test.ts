// The one error mapper: a client sees `error` and `error_description`; the operator's detail is
// logged and never sent.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InvalidClient, OAuthError } from '../../src/errors/index.ts';
import { errorHandler } from '../../src/http/plugins/errors.ts';
import { authenticateClient } from '../../src/oauth/client-auth/index.ts';

function respond(err: Error, config: { html?: boolean; bearer?: boolean } = {}) {
  const logged: Array<{ level: string; entry: Record<string, unknown> }> = [];
  const sent: { status?: number; headers: Record<string, string>; body?: unknown } = { headers: {} };
  const log = (level: string) => (entry: Record<string, unknown>) => logged.push({ level, entry });
  // A client authenticating with HTTP Basic: its id is logged, never its secret.
  const request = {
    log: { info: log('info'), error: log('error') },
    routeOptions: { config },
    headers: { authorization: `Basic ${Buffer.from('abc:s3cret').toString('base64')}` },
    params: {},
    query: {},
    cookies: {},
  } as unknown as FastifyRequest;
  const reply = {
    code(status: number) {
      sent.status = status;
      return this;
    },
    header(name: string, value: string) {
      sent.headers[name] = value;
      return this;
    },
    send(body: unknown) {
      sent.body = body;
      return this;
    },
  } as unknown as FastifyReply;
  errorHandler(err, request, reply);
  return { logged, sent };
}

describe('errors with an operator-only detail', () => {
  it('the detail is logged beside the error, and the response carries only error and error_description', () => {
    const { logged, sent } = respond(
      new InvalidClient('client authentication failed', 'client abc: wrong client_secret'),
    );
    assert.deepEqual(logged, [
      {
        level: 'info',
        entry: {
          error: 'invalid_client',
          description: 'client authentication failed',
          detail: 'client abc: wrong client_secret',
          client_id: 'abc',
        },
      },
    ]);
    assert.equal(JSON.stringify(logged).includes('s3cret'), false);
    assert.equal(sent.status, 401);
    assert.deepEqual(sent.body, { error: 'invalid_client', error_description: 'client authentication failed' });
    assert.equal(JSON.stringify(sent).includes('wrong client_secret'), false);
  });

  it('bearer and HTML answers leave the detail out too', () => {
    for (const config of [{ bearer: true }, { html: true }]) {
      const { sent } = respond(
        new OAuthError('invalid_token', 'the access token has been revoked', 401, 'grant g1 revoked'),
        config,
      );
      assert.equal(JSON.stringify(sent).includes('grant g1'), false, JSON.stringify(config));
    }
  });

  it('client authentication says the same to the client whatever failed, and to the operator why', async () => {
    const client = { clientId: 'c1', secretHash: 'x'.repeat(64), tokenEndpointAuthMethod: 'client_secret_basic' };
    const store = { getClient: async (id: string) => (id === 'c1' ? client : undefined) } as never;
    const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
    const failure = async (authorization: string | undefined, body: Record<string, string>) => {
      const err = await authenticateClient(
        store,
        authorization,
        new Map(Object.entries(body).map(([k, v]) => [k, [v]])),
      ).catch((e: unknown) => e);
      assert.ok(err instanceof InvalidClient);
      return [err.message, err.detail];
    };
    assert.deepEqual(await failure(basic('nobody', 's'), {}), ['client authentication failed', 'no client "nobody"']);
    assert.deepEqual(await failure(basic('c1', 'wrong'), {}), [
      'client authentication failed',
      'client c1: wrong client_secret',
    ]);
    assert.deepEqual(await failure(undefined, { client_id: 'c1' }), [
      'client authentication failed',
      'client c1 is registered for client_secret_basic, sent none',
    ]);
  });
});
