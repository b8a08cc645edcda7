// POST /oauth2/token (RFC 6749 §3.2), form-encoded; every answer carries Cache-Control: no-store.
import type { FastifyInstance } from 'fastify';
import { tokenEndpoint } from '../../oauth/token.ts';
import type { RouteContext } from '../context.ts';
import { requesterOf } from '../requester.ts';
import { clientGuard } from '../client-guard.ts';
import { allowOrigin, namedClient } from '../plugins/cors.ts';
import { originAllowedFor } from '../../oauth/origins.ts';
import { formParams } from '../forms.ts';

export function tokenRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const path = '/oauth2/token';
  const guard = clientGuard(ctx, path);
  app.post(path, async (request, reply) => {
    const now = ctx.now();
    // From a browser: its answers, errors included, are readable by the origins its client allows.
    const origin = request.headers.origin;
    if (origin !== undefined && (await originAllowedFor(ctx.store, namedClient(request), origin))) {
      allowOrigin(reply, origin);
    }
    // RFC 9449 §5: a proof binds the tokens to its key; without a DPoP header nothing is done for it.
    const proof = request.headers.dpop;
    const dpopJkt = proof === undefined ? undefined : await ctx.dpop.check(proof, { method: 'POST', path, now });
    const response = await tokenEndpoint(
      {
        config: ctx.config,
        store: ctx.store,
        keys: ctx.keys,
        codes: ctx.codes,
        refreshTokens: ctx.refreshTokens,
        now,
        ...(dpopJkt === undefined ? {} : { dpopJkt }),
        requester: () => requesterOf(request),
        issuers: ctx.issuers,
      },
      request.headers.authorization,
      formParams(request),
      guard(request, now),
      request.headers.origin,
    );
    const nonce = proof === undefined ? undefined : ctx.dpop.nonce(now);
    if (nonce !== undefined) reply.header('dpop-nonce', nonce);
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(response);
  });
}
