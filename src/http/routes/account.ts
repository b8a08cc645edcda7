// The user's account page: the applications they have granted access to, each with a button to
// withdraw it (revoking every refresh token of those grants and their access tokens), their recent
// sign-ins, and a form to change their password.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sessionUser } from '../../oauth/session.ts';
import { securityEvent } from '../../events/index.ts';
import { signIn } from '../../oauth/login.ts';
import type { User } from '../../store/users.ts';
import { passwordProblem } from '../../tokens/password-rules.ts';
import { hashPassword } from '../../tokens/passwords.ts';
import { accountPage, type AccountGrant, LOGIN_FAILED, loginPage } from '../../ui/pages.ts';
import type { RouteContext } from '../context.ts';
import { sendHtml } from '../plugins/html.ts';
import { formValue, queryValue } from '../forms.ts';
import { credentials, csrfFailedPage, sendThrottled, signInFromForm } from '../outcome.ts';
import { requesterOf } from '../requester.ts';

type PasswordNote = { error?: string; changed?: boolean };

function hostOf(clientId: string): string {
  return URL.parse(clientId)?.host ?? clientId;
}

export function accountRoutes(app: FastifyInstance, ctx: RouteContext): void {
  /** The page: the applications with access, the recent sign-ins, the password form and what it said. */
  async function sendAccount(request: FastifyRequest, reply: FastifyReply, user: User, password?: PasswordNote) {
    const now = ctx.now();
    const byClient = new Map<string, AccountGrant & { scopeSet: Set<string>; createdAt: number }>();
    for (const grant of await ctx.store.listActiveGrants(user.id, now)) {
      let entry = byClient.get(grant.clientId);
      if (!entry) {
        const { clientId, createdAt } = grant;
        // A client known by its metadata document (an https client_id) is not stored: its host names it.
        const clientName = grant.clientName ?? hostOf(clientId);
        byClient.set(
          clientId,
          (entry = { clientId, clientName, scopes: [], since: '', scopeSet: new Set(), createdAt }),
        );
      }
      for (const scope of grant.scope.split(' ')) entry.scopeSet.add(scope);
      entry.createdAt = Math.min(entry.createdAt, grant.createdAt);
    }
    const applications = [...byClient.values()].map((entry) => ({
      clientId: entry.clientId,
      clientName: entry.clientName,
      since: new Date(entry.createdAt * 1000).toISOString().slice(0, 10),
      scopes: [...entry.scopeSet].map((name) => ({ name, description: ctx.config.scopes.get(name) ?? name })),
    }));
    const signIns = (await ctx.store.listEvents({ userId: user.id, type: 'user.signed_in', limit: 10 })).map((e) => ({
      at: new Date(e.at * 1000).toISOString().replace('T', ' ').slice(0, 16) + ' UTC',
      ip: e.ip ?? 'unknown address',
      userAgent: e.userAgent ?? '',
    }));
    const registeredApps = (await ctx.store.listClientsOwnedBy(user.id)).map((client) => ({
      clientId: client.clientId,
      name: client.name,
      redirectUris: client.redirectUris,
      created: new Date(client.createdAt * 1000).toISOString().slice(0, 10),
    }));
    const csrfToken = ctx.browser.csrfToken(request, reply);
    const page = {
      username: user.username,
      csrfToken,
      applications,
      registeredApps,
      signIns,
      ...(password ? { password } : {}),
    };
    return sendHtml(reply, accountPage(page));
  }

  app.get('/account', { config: { html: true } }, async (request, reply) => {
    const session = await ctx.browser.session(request, ctx.now());
    const user = await sessionUser(ctx.store, session);
    if (!session || !user || user.disabled) return reply.redirect('/account/login', 302);
    return sendAccount(
      request,
      reply,
      user,
      queryValue(request, 'password') === 'changed' ? { changed: true } : undefined,
    );
  });

  // NIST SP 800-63B §3.1.1.2: the current password is required (checked as a sign-in is, throttled
  // alike), the new one meets the rules, and every other session of the user ends. Grants (refresh
  // tokens) stay: withdrawing an application is the page's other form.
  app.post('/account/password', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const now = ctx.now();
    const session = await ctx.browser.session(request, now);
    const user = await sessionUser(ctx.store, session);
    if (!session || !user || user.disabled) return reply.redirect('/account/login', 303);
    const current = formValue(request, 'current') ?? '';
    const next = formValue(request, 'new') ?? '';
    const requester = requesterOf(request);
    const attempt = { username: user.username, password: current, clientId: null, requester, now };
    const knownDevice = ctx.browser.knownDevice(request, user.username);
    const checked = await signIn(ctx.store, ctx.config.throttle, { ...attempt, knownDevice }, ctx.security);
    if (checked.kind === 'refused') {
      const error = `Too many wrong passwords. Try again in ${checked.refusal.retryAfter} seconds.`;
      reply.code(429).header('retry-after', String(checked.refusal.retryAfter));
      return sendAccount(request, reply, user, { error });
    }
    if (checked.kind === 'failed')
      return sendAccount(request, reply.code(400), user, { error: 'The current password is wrong.' });
    const problem = passwordProblem(next, { minLength: ctx.config.passwordMinLength, username: user.username });
    if (problem)
      return sendAccount(request, reply.code(400), user, { error: `${problem[0]!.toUpperCase()}${problem.slice(1)}.` });
    const changed = securityEvent('user.password_changed', now, { userId: user.id, requester });
    const passwordHash = await hashPassword(next);
    await ctx.store.changePassword({ userId: user.id, passwordHash, now, keepSession: session.id }, changed);
    return reply.redirect('/account?password=changed', 303);
  });

  app.post('/account/withdraw', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
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

  // An app the user registered (RFC 7591) is deleted, with every token issued to it; only its owner may.
  app.post('/account/apps/delete', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const now = ctx.now();
    const session = await ctx.browser.session(request, now);
    if (!session) return reply.redirect('/account/login', 303);
    const clientId = formValue(request, 'client_id');
    const client = clientId ? await ctx.store.getClient(clientId) : undefined;
    if (client && client.ownerId === session.userId) {
      const requester = requesterOf(request);
      const deleted = securityEvent('client.deleted', now, {
        userId: session.userId,
        clientId: client.clientId,
        requester,
      });
      await ctx.store.deleteClient(client.clientId, deleted);
    }
    return reply.redirect('/account', 303);
  });

  app.get('/account/login', { config: { html: true } }, async (request, reply) => {
    const failed = queryValue(request, 'error') === 'login_failed' ? { error: LOGIN_FAILED } : {};
    const page = { interaction: '', clientName: 'your account', action: '/account/login', ...failed };
    return sendHtml(reply, loginPage({ ...page, csrfToken: ctx.browser.csrfToken(request, reply) }));
  });

  app.post('/account/login', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const outcome = await signInFromForm(ctx, request, null);
    if (outcome.kind === 'refused') {
      const [username] = credentials(request);
      const page = { interaction: '', clientName: 'your account', action: '/account/login', username };
      return sendThrottled(reply, { ...page, csrfToken: ctx.browser.csrfToken(request, reply) }, outcome.refusal);
    }
    if (outcome.kind === 'failed') return reply.redirect('/account/login?error=login_failed', 303);
    ctx.browser.rememberDevice(request, reply, outcome.user.username);
    await ctx.browser.startSession(request, reply, outcome.user.id, ctx.now());
    return reply.redirect('/account', 303);
  });
}
