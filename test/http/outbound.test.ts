// Requests to URLs that clients and users supply (src/net/outbound.ts): no address inside our network
// is reached, whether written as an IP literal in any of its spellings or behind a DNS name; and real
// HTTPS exchanges with a local server whose certificate a throwaway CA signed, trusted the way Tessera
// will be tested, through NODE_EXTRA_CA_CERTS in a process of its own.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { fetchOutbound, isPublicAddress, OutboundError, type OutboundOptions } from '../../src/net/outbound.ts';
import { freePort } from '../helpers/server.ts';
import { createThrowawayCa } from '../helpers/tls.ts';

const BLOCKED: Record<string, string[]> = {
  loopback: ['127.0.0.1', '127.255.255.254', '::1'],
  unspecified: ['0.0.0.0', '0.1.2.3', '::'],
  private: ['10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', 'fc00::1', 'fd12:3456::1'],
  'link-local, where cloud metadata answers': ['169.254.169.254', '169.254.0.1', 'fe80::1', 'febf::1'],
  'carrier-grade NAT': ['100.64.0.1', '100.127.255.254'],
  'multicast and reserved': ['224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255', 'ff02::1', 'ff0e::1'],
  'protocol assignments, benchmarking, documentation': [
    ...['192.0.0.8', '198.18.0.1', '198.19.255.255', '192.0.2.1', '198.51.100.1', '203.0.113.1'],
    ...['2001::1', '2001:2::1', '2001:db8::1', '3fff::1', '100::1'],
  ],
  'IPv4-mapped and IPv4-compatible IPv6': [
    ...['::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:7f00:1', '::ffff:169.254.169.254', '::ffff:a00:1'],
    ...['::127.0.0.1', '::8.8.8.8', '::ffff:0:7f00:1'],
  ],
  '6to4 and NAT64 embedding': ['2002:7f00:1::1', '2002:a9fe:a9fe::', '64:ff9b::169.254.169.254', '64:ff9b::a00:1'],
  "NAT64's local-use prefix": ['64:ff9b:1::808:808'],
};
const PUBLIC = [
  ...['8.8.8.8', '1.1.1.1', '100.128.0.1', '172.32.0.1', '198.20.0.1', '223.255.255.255'],
  ...['2606:4700:4700::1111', '2a00:1450::1', '::ffff:8.8.8.8', '2002:808:808::1', '64:ff9b::8.8.8.8'],
];

const options = (more: Partial<OutboundOptions> = {}): OutboundOptions => ({
  timeoutMs: 3000,
  maxBytes: 1024,
  allowPrivate: false,
  ...more,
});

async function refusal(url: string, more: Partial<OutboundOptions> = {}): Promise<OutboundError> {
  const error = await fetchOutbound(url, options(more)).then(
    () => assert.fail(`${url} was fetched`),
    (error: unknown) => error,
  );
  assert.ok(error instanceof OutboundError, `${url}: ${error}`);
  return error;
}

describe('isPublicAddress', () => {
  for (const [kind, addresses] of Object.entries(BLOCKED)) {
    it(`refuses ${kind}`, () => {
      for (const address of addresses) assert.equal(isPublicAddress(address), false, address);
    });
  }

  it('accepts public addresses, also embedded in IPv6, and refuses what is no address', () => {
    for (const address of PUBLIC) assert.equal(isPublicAddress(address), true, address);
    for (const text of ['', 'localhost', '1.2.3', '[::1]', 'fe80::1%eth0']) assert.equal(isPublicAddress(text), false);
  });
});

describe('fetchOutbound: refused before connecting', () => {
  it('only https: URLs, without a user name or password', async () => {
    for (const url of ['http://example.com/', 'ftp://example.com/', 'file:///etc/passwd', 'example.com', '']) {
      assert.equal((await refusal(url)).reason, 'scheme', url);
    }
    for (const url of ['https://user:pass@example.com/', 'https://user@example.com/', 'https://:pass@example.com/']) {
      const error = await refusal(url);
      assert.equal(error.reason, 'scheme');
      assert.match(error.message, /user name or password/);
    }
  });

  it('every blocked class as an IP literal in the URL, in any spelling', async () => {
    const hosts = Object.values(BLOCKED)
      .flat()
      .map((address) => (address.includes(':') ? `[${address}]` : address));
    // The URL parser's other spellings of 127.0.0.1: a 32-bit number, hexadecimal, octal, shortened.
    hosts.push('2130706433', '0x7f000001', '0x7f.1', '017700000001', '127.1', '[0:0:0:0:0:ffff:127.0.0.1]');
    for (const host of hosts) {
      const error = await refusal(`https://${host}:8443/.well-known/client`);
      assert.equal(error.reason, 'address', host);
      assert.match(error.message, /is not a public address/);
    }
  });

  it('a caller without a deadline or a size limit is a programming error', async () => {
    for (const more of [{ timeoutMs: 0 }, { timeoutMs: Infinity }, { maxBytes: -1 }, { maxBytes: NaN }]) {
      await assert.rejects(fetchOutbound('https://example.com/', options(more)), TypeError);
    }
  });

  it('a DNS name that resolves to loopback: localhost', async () => {
    const error = await refusal('https://localhost/client.json');
    assert.equal(error.reason, 'address');
    assert.match(error.message, /^localhost resolves to (127\.0\.0\.1|::1), which is not a public address$/);
  });

  it('allowPrivate lets it connect: a closed port is a network error', async () => {
    const error = await refusal(`https://127.0.0.1:${await freePort()}/`, { allowPrivate: true });
    assert.equal(error.reason, 'network');
    assert.match(error.message, /ECONNREFUSED/);
  });
});

interface ChildResult {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  reason?: OutboundError['reason'];
  message?: string;
  /** Sockets the child still had open after fetchOutbound settled. */
  sockets: string[];
}

describe('fetchOutbound over HTTPS, trusting a throwaway CA through NODE_EXTRA_CA_CERTS', () => {
  let dir: string;
  let caFile: string;
  let server: Server | undefined;
  let origin: string;
  let connections = 0;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-outbound-'));
    const ca = await createThrowawayCa(dir);
    caFile = ca.caFile;
    server = createServer({ key: ca.key, cert: ca.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        switch (req.url) {
          case '/client.json':
            res.writeHead(200, { 'content-type': 'application/json' });
            return res.end('{"client_id":"https://app.example/client.json"}');
          case '/echo':
            return res.end(`${req.method} ${Buffer.concat(chunks)}`);
          case '/large': {
            // A megabyte without Content-Length, written as fast as the client reads it.
            const chunk = Buffer.alloc(16 * 1024, 'x');
            let sent = 0;
            const more = () => {
              while (sent < 1024 * 1024 && !res.destroyed) {
                sent += chunk.length;
                if (!res.write(chunk)) return res.once('drain', more);
              }
              res.end();
            };
            return more();
          }
          case '/large-declared':
            res.writeHead(200, { 'content-length': String(1024 * 1024) });
            return res.flushHeaders();
          case '/silent':
            return;
          case '/stalls':
            res.writeHead(200, { 'content-length': '100' });
            return res.write('ten bytes.');
          case '/redirect':
            res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
            return res.end();
          default:
            res.writeHead(404);
            return res.end();
        }
      });
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(0, '127.0.0.1', resolve);
    });
    const address = server.address();
    assert.ok(address && typeof address === 'object');
    origin = `https://127.0.0.1:${address.port}`;
  });

  after(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function fetchInChild(
    url: string,
    more: Partial<OutboundOptions> = {},
    trust: 'trust the CA' | 'no extra CA' = 'trust the CA',
  ): Promise<ChildResult> {
    // The test runner's own variables stay out: the child is a plain Node.js process.
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    delete env.NODE_EXTRA_CA_CERTS;
    if (trust === 'trust the CA') env.NODE_EXTRA_CA_CERTS = caFile;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(import.meta.dirname, '..', 'fixtures', 'fetch-outbound.ts'), url, JSON.stringify(options(more))],
      { env, timeout: 10_000 },
    );
    return JSON.parse(stdout) as ChildResult;
  }

  it('fetches a document by DNS name and by IP address (the certificate names both)', async () => {
    const [byName, posted] = await Promise.all([
      fetchInChild(`${origin.replace('127.0.0.1', 'localhost')}/client.json`, { allowPrivate: true }),
      fetchInChild(`${origin}/echo`, { allowPrivate: true, method: 'POST', body: 'hello' }),
    ]);
    assert.deepEqual([byName.status, byName.body], [200, '{"client_id":"https://app.example/client.json"}']);
    assert.equal(byName.headers?.['content-type'], 'application/json');
    assert.deepEqual(byName.sockets, []);
    assert.deepEqual([posted.status, posted.body, posted.sockets], [200, 'POST hello', []]);
  });

  it('refuses a body over maxBytes: as it arrives, and when Content-Length declares it', async () => {
    const paths = ['/large', '/large-declared'];
    const results = await Promise.all(
      paths.map((path) => fetchInChild(`${origin}${path}`, { allowPrivate: true, maxBytes: 1000 })),
    );
    for (const [i, result] of results.entries()) {
      assert.deepEqual(
        [result.reason, result.message, result.sockets],
        ['too_large', 'the answer is larger than 1000 bytes', []],
        paths[i],
      );
    }
  });

  it('gives up at the deadline: no answer at all, or a body that stops halfway', async () => {
    const paths = ['/silent', '/stalls'];
    const results = await Promise.all(
      paths.map((path) => fetchInChild(`${origin}${path}`, { allowPrivate: true, timeoutMs: 300 })),
    );
    for (const [i, result] of results.entries()) {
      assert.deepEqual(
        [result.reason, result.message, result.sockets],
        ['timeout', 'no complete answer within 300 ms', []],
        paths[i],
      );
    }
  });

  it('does not follow a redirect', async () => {
    const result = await fetchInChild(`${origin}/redirect`, { allowPrivate: true });
    assert.equal(result.reason, 'redirect');
    assert.match(result.message!, /\b302\b/);
    assert.deepEqual(result.sockets, []);
  });

  it('without NODE_EXTRA_CA_CERTS the certificate is not trusted: a network error', async () => {
    const result = await fetchInChild(`${origin}/client.json`, { allowPrivate: true }, 'no extra CA');
    assert.equal(result.reason, 'network');
    assert.match(result.message!, /certificate|issuer/);
    assert.deepEqual(result.sockets, []);
  });

  it('without allowPrivate the same server is refused before any connection', async () => {
    const before = connections;
    const hosts = ['localhost', '127.0.0.1', '[::ffff:127.0.0.1]'];
    const results = await Promise.all(
      hosts.map((host) => fetchInChild(`${origin.replace('127.0.0.1', host)}/client.json`)),
    );
    for (const [i, result] of results.entries()) assert.equal(result.reason, 'address', hosts[i]);
    assert.equal(connections, before);
  });
});
