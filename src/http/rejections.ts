// One log line for every refused request, at info: `request rejected`, with the error, the description
// the client saw, the operator's detail (which check, what was sent), the client the request names,
// and (from Fastify's request logger) the request id. Never a credential: the client's name is taken
// from the form, the query, the route or HTTP Basic's user name, never its password.
import type { FastifyRequest } from 'fastify';
import { namedClient } from './plugins/cors.ts';

export interface Rejection {
  error: string;
  description: string;
  detail?: string | undefined;
}

/** Long enough for a client ID metadata document's URL; a longer value is someone's noise. */
const MAX_CLIENT_ID = 256;

/** The client_id a request names, for the log (not authenticated: what the caller claims). */
export function claimedClientId(request: FastifyRequest): string | undefined {
  const params = request.params as { clientId?: unknown } | undefined;
  const query = request.query as { client_id?: unknown } | undefined;
  const named =
    namedClient(request) ??
    (typeof params?.clientId === 'string' ? params.clientId : undefined) ??
    (typeof query?.client_id === 'string' ? query.client_id : undefined);
  return named === undefined || named.length <= MAX_CLIENT_ID ? named : `${named.slice(0, MAX_CLIENT_ID)}…`;
}

export function logRejection(
  request: FastifyRequest,
  { error, description, detail }: Rejection,
  clientId: string | null | undefined = claimedClientId(request),
): void {
  request.log.info(
    { error, description, ...(detail ? { detail } : {}), ...(clientId ? { client_id: clientId } : {}) },
    'request rejected',
  );
}
