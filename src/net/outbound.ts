// Requests to URLs that clients and users supply (Client ID Metadata Documents now, webhooks later).
// Such a URL may point into our own network (server-side request forgery), so: https: only, no
// redirects, a deadline over the whole exchange, a cap on the body, and no connection to a loopback,
// private, link-local or otherwise special address. A DNS name is checked inside the socket's own
// `lookup`, on the very addresses it then connects to, so a name that resolves to a public address
// for a check and to 127.0.0.1 for the connection (DNS rebinding) gets nowhere.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export interface OutboundOptions {
  /** GET unless given. */
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The whole exchange: DNS, connect, TLS, headers and body. */
  timeoutMs: number;
  /** The most response body accepted; more is refused as soon as it arrives. */
  maxBytes: number;
  /** Connect to loopback, private and link-local addresses too: development and tests only. */
  allowPrivate: boolean;
  /** Plain http: as well: development and tests only (webhook receivers on a developer's machine). */
  allowHttp?: boolean;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** From the call to the last byte of the body. */
  ms: number;
}

export type OutboundErrorReason =
  /** Not an absolute https: URL, or one carrying a user name or password. */
  | 'scheme'
  /** The host is, or resolves to, an address that is not public. */
  | 'address'
  | 'timeout'
  /** The body is larger than maxBytes (declared in Content-Length or as it arrived). */
  | 'too_large'
  /** A 3xx answer: not followed, since a document's URL is its identity and every hop would need every check. */
  | 'redirect'
  /** DNS, TCP or TLS failed (an untrusted certificate, a refused connection), or the answer broke off. */
  | 'network';

export class OutboundError extends Error {
  readonly reason: OutboundErrorReason;
  constructor(reason: OutboundErrorReason, message: string, options?: ErrorOptions) {
    super(message, options);
    this.reason = reason;
  }
  override get name(): string {
    return `OutboundError(${this.reason})`;
  }
}

function subnets(family: 'ipv4' | 'ipv6', list: [string, number][]): BlockList {
  const blockList = new BlockList();
  for (const [network, prefix] of list) blockList.addSubnet(network, prefix, family);
  return blockList;
}

// The IANA IPv4 Special-Purpose Address Registry (RFC 6890 and its updates), with multicast: none of
// these is where a client's document or a webhook receiver lives.
const SPECIAL_IPV4 = subnets('ipv4', [
  ['0.0.0.0', 8], // "this network", including the unspecified 0.0.0.0
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // carrier-grade NAT (RFC 6598)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, where cloud metadata services answer (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast 255.255.255.255
]);

// Public IPv6 unicast is 2000::/3 (RFC 4291 §2.4): everything outside it is loopback, unspecified,
// unique local (fc00::/7), link-local (fe80::/10), multicast (ff00::/8), discard (100::/64) or an
// IPv4 embedding handled below. These are the special ranges inside it.
const GLOBAL_UNICAST_IPV6 = subnets('ipv6', [['2000::', 3]]);
const SPECIAL_IPV6 = subnets('ipv6', [
  ['2001::', 23], // IETF protocol assignments: Teredo, benchmarking, ORCHID
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
]);

/** The eight 16-bit groups of an IPv6 address (no zone), or null if it is not one. */
function ipv6Groups(address: string): number[] | null {
  if (isIP(address) !== 6 || address.includes('%')) return null;
  let text = address;
  const tail: number[] = [];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    tail.push((a << 8) | b, (c << 8) | d);
    text = text.slice(0, dotted.index) + '0:0';
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = parse(head);
  const back = rest === undefined ? [] : parse(rest);
  const groups = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  if (tail.length) groups.splice(6, 2, ...tail);
  return groups;
}

const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/** Whether a connection to this IP address could only reach the public internet. */
export function isPublicAddress(address: string): boolean {
  if (isIP(address) === 4) return !SPECIAL_IPV4.check(address, 'ipv4');
  const groups = ipv6Groups(address);
  if (!groups) return false;
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups;
  // IPv4-mapped ::ffff:a.b.c.d (RFC 4291 §2.5.5.2): a dual-stack socket connects to a.b.c.d itself.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) return isPublicAddress(ipv4Of(g6, g7));
  // NAT64's well-known prefix 64:ff9b::/96 (RFC 6052): the translator connects to the embedded address.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    return isPublicAddress(ipv4Of(g6, g7));
  // 6to4 2002:a.b.c.d::/48 (RFC 3056): a relay forwards to a.b.c.d.
  if (g0 === 0x2002) return isPublicAddress(ipv4Of(g1, g2));
  // Outside 2000::/3 this also refuses ::, ::1, the deprecated IPv4-compatible ::a.b.c.d and NAT64's
  // local-use 64:ff9b:1::/48, which translates into the operator's own network.
  return GLOBAL_UNICAST_IPV6.check(address, 'ipv6') && !SPECIAL_IPV6.check(address, 'ipv6');
}

function refuseUnlessPublic(host: string, addresses: string[], allowPrivate: boolean): OutboundError | null {
  if (allowPrivate) return null;
  const blocked = addresses.find((address) => !isPublicAddress(address));
  if (blocked === undefined) return null;
  const what = blocked === host ? host : `${host} resolves to ${blocked}, which`;
  return new OutboundError('address', `${what} is not a public address`);
}

/**
 * Resolves like dns.lookup, then refuses the name if any of its addresses is not public; the socket
 * connects only to addresses returned here, so the check and the connection see the same answer.
 */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(
      hostname,
      { family: options.family, hints: options.hints, all: true },
      (error, addresses: LookupAddress[]) => {
        if (error) return callback(error, []);
        if (addresses.length === 0) return callback(new OutboundError('network', `${hostname} has no address`), []);
        const refused = refuseUnlessPublic(
          hostname,
          addresses.map((a) => a.address),
          allowPrivate,
        );
        if (refused) return callback(refused, []);
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      },
    );
  };
}

/** Checks that need no connection: the URL's scheme and credentials, and a host that is an IP literal. */
function target(url: string, allowPrivate: boolean, allowHttp: boolean): { parsed: URL; host: string } {
  const parsed = URL.parse(url);
  if (!parsed) throw new OutboundError('scheme', 'not an absolute URL');
  if (parsed.protocol !== 'https:' && !(allowHttp && parsed.protocol === 'http:'))
    throw new OutboundError('scheme', `${parsed.protocol} URLs are not fetched, only https:`);
  if (parsed.username || parsed.password)
    throw new OutboundError('scheme', 'a URL with a user name or password is not fetched');
  // Node.js connects to an IP literal without calling `lookup`: check it here.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host)) {
    const refused = refuseUnlessPublic(host, [host], allowPrivate);
    if (refused) throw refused;
  }
  return { parsed, host };
}

/**
 * One HTTPS exchange with a URL from outside. Resolves with any non-3xx answer (the caller judges
 * 4xx and 5xx); rejects with an OutboundError for every network outcome. The connection is never
 * reused and is closed when this settles.
 */
export async function fetchOutbound(url: string, options: OutboundOptions): Promise<OutboundResponse> {
  const { timeoutMs, maxBytes, allowPrivate } = options;
  // setTimeout fires at once for a delay beyond 2^31 - 1 ms.
  if (!(timeoutMs > 0 && timeoutMs < 2 ** 31) || !Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new TypeError('timeoutMs must be between 1 and 2^31 - 1, maxBytes a whole number of bytes');
  }
  const started = performance.now();
  const { parsed, host } = target(url, allowPrivate, options.allowHttp ?? false);
  const plain = parsed.protocol === 'http:';

  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (error: OutboundError | null, response?: OutboundResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // agent: false already closes the socket after a whole answer; this also covers every way out.
      req.destroy();
      if (error) reject(error);
      else resolve(response!);
    };
    const timer = setTimeout(
      () => settle(new OutboundError('timeout', `no complete answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const tooLarge = () => new OutboundError('too_large', `the answer is larger than ${maxBytes} bytes`);

    const req = (plain ? httpRequest : request)(
      {
        hostname: host,
        port: parsed.port || (plain ? 80 : 443),
        path: `${parsed.pathname}${parsed.search}`,
        method: options.method ?? 'GET',
        headers: options.headers,
        lookup: guardedLookup(allowPrivate),
        // A fresh agent: no connection is reused, and no proxy from the environment (NODE_USE_ENV_PROXY
        // configures the global agents only) resolves the name where `lookup` cannot check it.
        agent: false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        res.on('error', (error) => settle(new OutboundError('network', error.message, { cause: error })));
        if (status >= 300 && status < 400)
          return settle(new OutboundError('redirect', `answered ${status}, a redirect, which is not followed`));
        if (Number(res.headers['content-length']) > maxBytes) return settle(tooLarge());
        const chunks: Buffer[] = [];
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > maxBytes) return settle(tooLarge());
          chunks.push(chunk);
        });
        res.on('end', () =>
          settle(null, {
            status,
            headers: { ...res.headers },
            body: Buffer.concat(chunks),
            ms: Math.round(performance.now() - started),
          }),
        );
      },
    );
    req.on('error', (error) =>
      settle(error instanceof OutboundError ? error : new OutboundError('network', error.message, { cause: error })),
    );
    req.end(options.body);
  });
}
