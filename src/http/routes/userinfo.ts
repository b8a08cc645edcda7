// GET and POST /oauth2/userinfo (OIDC Core §5.3) with a Bearer token (RFC 6750 §2.1, §2.2).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { originAllowedFor } from '../../oauth/origins.ts';
import { allowOrigin } from '../plugins/cors.ts';
import { InvalidRequest, InvalidToken } from '../../errors/index.ts';
import { userinfo } from '../../oidc/userinfo.ts';
import { bearerToken as fromHeader } from '../../oauth/token-status.ts';
import type { RouteContext } from '../context.ts';

function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  const fromBody = request.body instanceof URLSearchParams ? request.body.get('access_token') : null;
  if (header !== undefined && fromBody !== null)
    throw new InvalidRequest('the access token must be sent in only one way');
  if (header !== undefined) {
    const token = fromHeader(header);
    if (token === undefined) throw new InvalidToken('the Authorization header must carry a Bearer token');
    return token;
  }
  if (fromBody) return fromBody;
  throw new InvalidToken('an access token is required');
}

export function userinfoRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const { body, clientId } = await userinfo(ctx, bearerToken(request), ctx.now());
    const origin = request.headers.origin;
    if (origin !== undefined && (await originAllowedFor(ctx.store, clientId, origin))) allowOrigin(reply, origin);
    return reply.header('cache-control', 'no-store').send(body);
  };
  const options = { config: { bearer: true } };
  app.get('/oauth2/userinfo', options, handler);
  app.post('/oauth2/userinfo', options, handler);
}
