// TESSERA_TRUST_PROXY: whose X-Forwarded-* headers the server believes, as Fastify's trustProxy.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { ConfigError, loadConfig } from '../../src/config/index.ts';

const production = { NODE_ENV: 'production', TESSERA_ISSUER: 'https://id.example', TESSERA_SECRET: 'x'.repeat(32) };

describe('TESSERA_TRUST_PROXY', () => {
  it('defaults to a proxy on the same machine in production and to nobody otherwise', () => {
    assert.deepEqual(loadConfig(production).trustProxy, ['loopback']);
    assert.equal(loadConfig({}).trustProxy, false);
  });

  it('takes true, false, a number of hops, or addresses, CIDRs and presets', () => {
    const trust = (value: string) => loadConfig({ ...production, TESSERA_TRUST_PROXY: value }).trustProxy;
    assert.equal(trust('true'), true);
    assert.equal(trust('false'), false);
    assert.equal(trust('2'), 2);
    assert.deepEqual(trust('10.0.0.0/8, 192.168.1.7,::1'), ['10.0.0.0/8', '192.168.1.7', '::1']);
    assert.throws(() => trust('proxy.example'), ConfigError);
  });

  it('the client address is the forwarded one only behind a trusted peer', async () => {
    for (const [value, ip] of [
      ['loopback', '203.0.113.9'],
      ['10.0.0.0/8', '127.0.0.1'],
    ] as const) {
      const trustProxy = loadConfig({ ...production, TESSERA_TRUST_PROXY: value }).trustProxy;
      assert.ok(typeof trustProxy !== 'number');
      const app = Fastify({ trustProxy });
      app.get('/ip', async (request) => request.ip);
      const response = await app.inject({ url: '/ip', headers: { 'x-forwarded-for': '203.0.113.9' } });
      assert.equal(response.body, ip, value);
      await app.close();
    }
  });
});
