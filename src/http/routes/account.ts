// The user's account page: the applications they have granted access to, each with a button to
// withdraw it (revoking every refresh token of those grants and their access tokens).
import type { FastifyInstance } from 'fastify';
import { sessionUser } from '../../oauth/session.ts';
import { securityEvent } from '../../events/index.ts';
import { authenticateUser, recordFailedSignIn } from '../../oauth/login.ts';
import { accountPage, type AccountGrant, LOGIN_FAILED, loginPage } from '../../ui/pages.ts';
import type { RouteContext } from '../context.ts';
import { sendHtml } from '../plugins/html.ts';
import { formValue, queryValue } from '../forms.ts';
import { credentials, csrfFailedPage } from '../outcome.ts';
import { requesterOf } from '../requester.ts';

export function accountRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/account', { config: { html: true } }, async (request, reply) => {
    const now = ctx.now();
    const session = await ctx.browser.session(request, now);
    const user = await sessionUser(ctx.store, session);
    if (!session || !user || user.disabled) return reply.redirect('/account/login', 302);
    const byClient = new Map<string, AccountGrant & { scopeSet: Set<string>; createdAt: number }>();
    for (const grant of await ctx.store.listActiveGrants(user.id, now)) {
      let entry = byClient.get(grant.client_id);
      if (!entry) {
        const { client_id: clientId, client_name: clientName, created_at: createdAt } = grant;
        byClient.set(
          clientId,
          (entry = { clientId, clientName, scopes: [], since: '', scopeSet: new Set(), createdAt }),
        );
      }
      for (const scope of grant.scope.split(' ')) entry.scopeSet.add(scope);
      entry.createdAt = Math.min(entry.createdAt, grant.created_at);
    }
    const applications = [...byClient.values()].map((entry) => ({
      clientId: entry.clientId,
      clientName: entry.clientName,
      since: new Date(entry.createdAt * 1000).toISOString().slice(0, 10),
      scopes: [...entry.scopeSet].map((name) => ({ name, description: ctx.config.scopes.get(name) ?? name })),
    }));
    const csrfToken = ctx.browser.csrfToken(request, reply);
    return sendHtml(reply, accountPage({ username: user.username, csrfToken, applications }));
  });

  app.post('/account/withdraw', { config: { html: true } }, async (request, reply) => {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const now = ctx.now();
    const session = await ctx.browser.session(request, now);
    if (!session) return reply.redirect('/account/login', 303);
    const clientId = formValue(request, 'client_id');
    if (clientId) {
      const withdrawn = securityEvent('consent.withdrawn', now, {
        userId: session.userId,
        clientId,
        requester: requesterOf(request),
      });
      const count = await ctx.store.withdrawClient(session.userId, clientId, now, withdrawn);
      request.log.info({ event: 'grant_withdrawn', clientId, grants: count }, 'access withdrawn');
    }
    return reply.redirect('/account', 303);
  });

  app.get('/account/login', { config: { html: true } }, async (request, reply) => {
    const failed = queryValue(request, 'error') === 'login_failed' ? { error: LOGIN_FAILED } : {};
    const page = { interaction: '', clientName: 'your account', action: '/account/login', ...failed };
    return sendHtml(reply, loginPage({ ...page, csrfToken: ctx.browser.csrfToken(request, reply) }));
  });

  app.post('/account/login', { config: { html: true } }, async (request, reply) => {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const [username, password] = credentials(request);
    const user = await authenticateUser(ctx.store, username, password);
    if (!user) {
      await recordFailedSignIn(ctx.store, username, null, ctx.now(), requesterOf(request));
      return reply.redirect('/account/login?error=login_failed', 303);
    }
    await ctx.browser.startSession(request, reply, user.id, ctx.now());
    return reply.redirect('/account', 303);
  });
}
