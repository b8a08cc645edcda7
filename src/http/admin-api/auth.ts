// Who may call the admin API: the bearer of one of Tessera's access tokens (verified as userinfo
// verifies it, src/oauth/token-status.ts) carrying the `admin` scope, which only clients the operator
// marks `--admin` and users with the admin role are ever granted (src/oauth/scopes.ts). No token:
// 401 with `WWW-Authenticate: Bearer`; a token without the scope: 403 insufficient_scope.
// Each write records its actor: `client:<client_id>` for a client's own token (client_credentials),
// `user:<id>` for a person's.
import type { FastifyRequest } from 'fastify';
import type { Requester } from '../../events/index.ts';
import { activeAccessToken, bearerToken, type TokenStatusDeps } from '../../oauth/token-status.ts';
import { requesterOf } from '../requester.ts';
import { Problem } from './problems.ts';
import { ADMIN_ROLE } from '../../store/users.ts';

export const ADMIN_SCOPE = 'admin';

/** The requester of an authorized admin API request: its address, user agent, request id and actor. */
export async function adminRequester(deps: TokenStatusDeps, request: FastifyRequest, now: number): Promise<Requester> {
  const header = request.headers.authorization;
  if (header === undefined) throw new Problem(401, 'unauthorized', 'an access token with the admin scope is required');
  const token = bearerToken(header);
  if (token === undefined) throw new Problem(401, 'unauthorized', 'the Authorization header must carry a Bearer token');
  const { claims, user } = await activeAccessToken(deps, token, now);
  if (!claims.scope.split(' ').includes(ADMIN_SCOPE))
    throw new Problem(403, 'insufficient-scope', 'the access token lacks the admin scope');
  // The scope says what was granted; the role or the mark says whether it still holds: taken away,
  // the token stops here at once rather than at its expiry.
  if (user ? !user.roles.includes(ADMIN_ROLE) : (await deps.store.getClient(claims.client_id))?.admin !== true)
    throw new Problem(403, 'insufficient-scope', `the ${user ? 'user' : 'client'} is no longer an administrator`);
  const actor = user ? `user:${user.id}` : `client:${claims.client_id}`;
  return { ...requesterOf(request), actor };
}
