// GET and POST /oauth2/userinfo (OIDC Core §5.3) with a Bearer token (RFC 6750 §2.1, §2.2) or a
// DPoP-bound one and its proof (RFC 9449 §7.1).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { originAllowedFor } from '../../oauth/origins.ts';
import { allowOrigin } from '../plugins/cors.ts';
import { InvalidDpopProof, InvalidRequest, InvalidToken } from '../../errors/index.ts';
import { userinfo } from '../../oidc/userinfo.ts';
import { bearerToken as fromHeader, dpopToken } from '../../oauth/token-status.ts';
import type { RouteContext } from '../context.ts';

/** The access token, and how it was presented: RFC 6750 §2.1 and §2.2, or RFC 9449 §7.1's DPoP scheme. */
function accessToken(request: FastifyRequest): { token: string; dpop: boolean } {
  const header = request.headers.authorization;
  const fromBody = request.body instanceof URLSearchParams ? request.body.get('access_token') : null;
  if (header !== undefined && fromBody !== null)
    throw new InvalidRequest('the access token must be sent in only one way');
  if (header !== undefined) {
    const token = fromHeader(header);
    if (token !== undefined) return { token, dpop: false };
    const bound = dpopToken(header);
    if (bound !== undefined) return { token: bound, dpop: true };
    throw new InvalidToken('the Authorization header must carry a Bearer or DPoP token');
  }
  if (fromBody) return { token: fromBody, dpop: false };
  throw new InvalidToken('an access token is required');
}

const path = '/oauth2/userinfo';

export function userinfoRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const now = ctx.now();
    const { token, dpop } = accessToken(request);
    // RFC 9449 §7.1: the DPoP scheme comes with a proof of the token's key, for this request and token.
    const proof = request.headers.dpop;
    if (dpop && proof === undefined) throw new InvalidDpopProof('a DPoP proof is required with the DPoP scheme');
    const presented =
      dpop && proof !== undefined
        ? await ctx.dpop.check(proof, { method: request.method, path, now, accessToken: token })
        : undefined;
    const { body, clientId } = await userinfo(ctx, token, now, presented);
    const nonce = presented === undefined ? undefined : ctx.dpop.nonce(now);
    if (nonce !== undefined) reply.header('dpop-nonce', nonce);
    const origin = request.headers.origin;
    if (origin !== undefined && (await originAllowedFor(ctx.store, clientId, origin))) allowOrigin(reply, origin);
    return reply.header('cache-control', 'no-store').send(body);
  };
  const options = { config: { bearer: true, dpop: true } };
  app.get(path, options, handler);
  app.post(path, options, handler);
}
