// The account page's upstream providers: linking another (POST /account/upstream/link, which goes to
// the provider and comes back to its callback, ./upstream.ts) and unlinking one
// (POST /account/upstream/unlink), each for the signed-in user only and, as every change to how a
// user signs in, on a recent sign-in (src/authn/recent.ts; else the sign-in page first). The list
// itself is part of the account page (./account.ts, src/account/upstream.ts).
import type { FastifyInstance } from 'fastify';
import { recentEnough, unlinkProvider } from '../../account/upstream.ts';
import { ANY_SIGN_IN } from '../../authn/requirement.ts';
import type { RouteContext } from '../context.ts';
import { formValue } from '../forms.ts';
import { accountForm, signInAgain } from '../sign-in.ts';
import { startUpstream } from '../upstream.ts';

export function accountUpstreamRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.post('/account/upstream/link', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const form = await accountForm(ctx, request, reply);
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
    const form = await accountForm(ctx, request, reply);
    if ('sent' in form) return form.sent;
    const outcome = await unlinkProvider(ctx.store, { ...form, providerId: formValue(request, 'provider') ?? '' });
    if (outcome === 'reauth') return signInAgain(reply);
    return reply.redirect(`/account?upstream=${outcome === 'last' ? 'last' : 'unlinked'}`, 303);
  });
}
