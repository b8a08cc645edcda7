// RFC 9126 §4: an authorization request that names a pushed request by its request_uri is that
// request: its parameters, and none of the query's but client_id, which must be the pusher's. The
// request_uri is one-time (taken from the store as it is used, on any instance) and short-lived. A
// request_uri that is not a pushed request's is not supported (RFC 9101's by reference are not):
// ./checks.ts noRequestObjects answers request_uri_not_supported to the client.
import { UntrustedRedirectError } from '../../errors/index.ts';
import type { OneTimeStore } from '../../store/one-time.ts';
import { hashToken } from '../../tokens/opaque.ts';
import { type Params, single } from '../params.ts';

/** RFC 9126 §2.2: the prefix of the request_uris the pushed authorization request endpoint gives out. */
export const PUSHED_REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/** The stored id of a pushed request: the hash of its request_uri's random part. */
export function pushedRequestId(reference: string): string {
  return hashToken(`pushed-request\n${reference}`);
}

/** Whether the request names a pushed request (a plain one is read no further). */
export function namesPushedRequest(params: Params): boolean {
  return params.get('request_uri')?.[0]?.startsWith(PUSHED_REQUEST_URI_PREFIX) === true;
}

/** The pushed request `params` names, taken (one use); shown as an error page when it cannot be used. */
export async function pushedRequest(
  store: Pick<OneTimeStore, 'takePushedRequest'>,
  params: Params,
  now: number,
): Promise<Params> {
  const uri = params.get('request_uri');
  if (uri?.length !== 1) throw new UntrustedRedirectError('invalid_request', 'request_uri is included more than once');
  const clientId = single(params, 'client_id');
  if (!clientId) throw new UntrustedRedirectError('invalid_request', 'client_id is required with request_uri');
  const pushed = await store.takePushedRequest(pushedRequestId(uri[0]!.slice(PUSHED_REQUEST_URI_PREFIX.length)), now);
  if (!pushed || pushed.clientId !== clientId) {
    const why = pushed ? `pushed by ${pushed.clientId}, used by ${clientId}` : 'unknown, used or expired';
    throw new UntrustedRedirectError('invalid_request_uri', 'the request_uri is unknown, used or expired', why);
  }
  return new Map(Object.entries(pushed.params).map(([name, value]) => [name, [value]]));
}
