// The account page's upstream providers: linking another (POST /account/upstream/link, which goes to
// the provider and comes back to its callback, ./upstream.ts) and unlinking one
// (POST /account/upstream/unlink), each for the signed-in user only and, as every change to how a
// user signs in, on a recent sign-in (src/authn/recent.ts; else the sign-in page first). The list
// itself is part of the account page (./account.ts, src/account/upstream.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { recentEnough, unlinkProvider } from '../../account/upstream.ts';
import { ANY_SIGN_IN } from '../../authn/policy.ts';
import type { RouteContext } from '../context.ts';
import { formValue } from '../forms.ts';
import { csrfFailedPage } from '../outcome.ts';
import { requesterOf } from '../requester.ts';
import { signedInSession } from '../sign-in.ts';
import { startUpstream } from '../upstream.ts';

export function accountUpstreamRoutes(app: FastifyInstance, ctx: RouteContext): void {
  /** The account page's forms: the form token, then the session (else the sign-in page). */
  async function accountForm(request: FastifyRequest, reply: FastifyReply) {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return { sent: csrfFailedPage(reply) };
    const current = await signedInSession(ctx, request);
    if (!current) return { sent: reply.redirect('/account/login', 303) };
    return { ...current, requester: requesterOf(request), now: ctx.now() };
  }
  const signInAgain = (reply: FastifyReply) => reply.redirect('/account/login?reauth=1', 303);

  app.post('/account/upstream/link', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const form = await accountForm(request, reply);
    if ('sent' in form) return form.sent;
    if (!recentEnough(form.session, form.user, form.now)) return signInAgain(reply);
    return startUpstream(ctx, request, reply, {
      providerId: formValue(request, 'provider') ?? '',
      purpose: 'link',
      resume: null,
      clientId: null,
      need: ANY_SIGN_IN,
      userId: form.user.id,
      loginHint: null,
    });
  });

  app.post('/account/upstream/unlink', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const form = await accountForm(request, reply);
    if ('sent' in form) return form.sent;
    const outcome = await unlinkProvider(ctx.store, { ...form, providerId: formValue(request, 'provider') ?? '' });
    if (outcome === 'reauth') return signInAgain(reply);
    return reply.redirect(`/account?upstream=${outcome === 'last' ? 'last' : 'unlinked'}`, 303);
  });
}
