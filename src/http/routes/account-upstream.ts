// The account page's upstream providers: linking another (POST /account/upstream/link, which goes to
// the provider and comes back to its callback, ./upstream.ts) and unlinking one
// (POST /account/upstream/unlink), each for the signed-in user only. The list itself is part of the
// account page (./account.ts, src/account/upstream.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { unlinkProvider } from '../../account/upstream.ts';
import { ANY_SIGN_IN } from '../../authn/policy.ts';
import { sessionUser } from '../../authn/session.ts';
import { shortfall } from '../../authn/sufficiency.ts';
import type { RouteContext } from '../context.ts';
import { formValue } from '../forms.ts';
import { csrfFailedPage } from '../outcome.ts';
import { requesterOf } from '../requester.ts';
import { startUpstream } from '../upstream.ts';

export function accountUpstreamRoutes(app: FastifyInstance, ctx: RouteContext): void {
  /** The signed-in user, when the session is enough for the account page. */
  async function signedInUser(request: FastifyRequest) {
    const session = await ctx.browser.session(request, ctx.now());
    const user = await sessionUser(ctx.store, session);
    return session && user && !shortfall(session, user, ANY_SIGN_IN) ? user : undefined;
  }

  app.post('/account/upstream/link', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const user = await signedInUser(request);
    if (!user) return reply.redirect('/account/login', 303);
    return startUpstream(ctx, request, reply, {
      providerId: formValue(request, 'provider') ?? '',
      purpose: 'link',
      resume: null,
      clientId: null,
      need: ANY_SIGN_IN,
      userId: user.id,
      loginHint: null,
    });
  });

  app.post('/account/upstream/unlink', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const user = await signedInUser(request);
    if (!user) return reply.redirect('/account/login', 303);
    const providerId = formValue(request, 'provider') ?? '';
    const outcome = await unlinkProvider(ctx.store, {
      user,
      providerId,
      requester: requesterOf(request),
      now: ctx.now(),
    });
    return reply.redirect(`/account?upstream=${outcome === 'last' ? 'last' : 'unlinked'}`, 303);
  });
}
