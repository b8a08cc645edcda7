// The request id: each request's log lines carry it, and every answer sends it back as X-Request-Id,
// so that a client's report, the proxy's access log and Tessera's log lines meet. A proxy in
// TESSERA_TRUST_PROXY may name it (nginx's $request_id, an ingress's), so one id follows the request
// through every hop; from anyone else the header is ignored, or a caller could write lines that look
// like another request's. Otherwise it is a random UUID, unique across instances and restarts (where
// Fastify's default is a per-process counter).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { Config } from '../config/index.ts';

export const REQUEST_ID_HEADER = 'x-request-id';

/** A proxy's id is kept if it is 1 to 128 visible ASCII characters: nothing that could break a log line. */
const ACCEPTABLE = /^[\x21-\x7e]{1,128}$/;

/** Whether the peer itself (the first hop) is a proxy Tessera trusts, by Fastify's rules for trustProxy. */
function trustsPeer(trustProxy: Config['trustProxy']): ((address: string) => boolean) | boolean {
  if (typeof trustProxy === 'boolean') return trustProxy;
  if (typeof trustProxy === 'number') return trustProxy > 0;
  const trusted = proxyAddr.compile(trustProxy);
  return (address) => trusted(address, 0);
}

/** Fastify's genReqId: called once per request, so cheap; it reads one header and one address at most. */
export function requestIdGenerator(trustProxy: Config['trustProxy']): (request: IncomingMessage) => string {
  const trusted = trustsPeer(trustProxy);
  if (trusted === false) return () => randomUUID();
  return (request) => {
    const given = request.headers[REQUEST_ID_HEADER];
    if (typeof given === 'string' && ACCEPTABLE.test(given)) {
      if (trusted === true || trusted(request.socket.remoteAddress ?? '')) return given;
    }
    return randomUUID();
  };
}

/** TESSERA_TRUST_PROXY as Fastify's trustProxy: a number of hops is Fastify's own rule, written out for its types. */
export function fastifyTrustProxy(
  trustProxy: Config['trustProxy'],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trustProxy !== 'number') return trustProxy;
  return (_address, hop) => hop < trustProxy;
}
