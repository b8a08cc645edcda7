// GET and POST /oauth2/logout (RP-Initiated Logout), the CSRF-protected confirmation, and the
// signed-out page; after the confirmation, the clients registered for front-channel logout are loaded
// in that page's iframes (src/oidc/frontchannel-logout.ts) before it goes on.
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OAuthError } from '../../errors/index.ts';
import { sessionUser } from '../../authn/session.ts';
import { paramsFrom } from '../../oauth/params.ts';
import { frontchannelLogouts } from '../../oidc/frontchannel-logout.ts';
import { afterLogout, LogoutSealer, SIGNED_OUT, validateLogout } from '../../oidc/logout.ts';
import {
  FRONTCHANNEL_LOGOUT_SCRIPT,
  frontchannelLogoutPage,
  logoutConfirmPage,
  signedOutPage,
} from '../../ui/pages.ts';
import type { RouteContext } from '../context.ts';
import { sendPage } from '../pages.ts';
import { framingCsp } from '../plugins/html.ts';
import { formValue } from '../forms.ts';
import { csrfFailedPage, sendError } from '../outcome.ts';
import type { Secrets } from '../../tokens/secrets.ts';
import { scriptRoutes } from './assets.ts';

const SCRIPT = readFileSync(new URL('../../ui/assets/frontchannel-logout.js', import.meta.url), 'utf8');

export function logoutRoutes(app: FastifyInstance, ctx: RouteContext, secret: Secrets): void {
  const sealer = new LogoutSealer(secret);
  scriptRoutes(app, [[FRONTCHANNEL_LOGOUT_SCRIPT, SCRIPT]]);

  async function start(request: FastifyRequest, reply: FastifyReply, params: URLSearchParams): Promise<FastifyReply> {
    const now = ctx.now();
    let checked;
    try {
      checked = await validateLogout(ctx, paramsFrom(params), now);
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      return sendError(reply, 'error.logout.title', { error: err.error, description: err.message });
    }
    const { logout, vetting } = checked;
    const session = await ctx.browser.session(request, now);
    const user = await sessionUser(ctx.store, session);
    if (!session || !user) {
      // Nobody to sign out: go where the client asked (§3) or show the signed-out page.
      return reply.header('cache-control', 'no-store').redirect(afterLogout(logout), 303);
    }
    const bound = sealer.seal({ ...logout, browser: ctx.browser.binding(request, reply) });
    const page = { logout: bound, clientName: logout.clientName, username: user.username, ...(vetting && { vetting }) };
    const csrfToken = ctx.browser.csrfToken(request, reply);
    return sendPage(reply, (ui) => logoutConfirmPage(ui, { ...page, csrfToken }));
  }

  app.get('/oauth2/logout', { config: { html: true } }, async (request, reply) => {
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
    return start(request, reply, new URLSearchParams(query));
  });
  app.post('/oauth2/logout', { config: { html: true } }, async (request, reply) =>
    start(request, reply, request.body instanceof URLSearchParams ? request.body : new URLSearchParams()),
  );

  app.post('/logout', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const opened = sealer.open(formValue(request, 'logout') ?? '', ctx.now());
    const logout = opened && ctx.browser.isBound(request, opened.browser) ? opened : undefined;
    if (!logout) {
      return sendError(reply, 'error.logoutExpired.title', {
        description: 'Go back and start again.',
        says: 'error.logoutExpired.says',
      });
    }
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const ended = await ctx.browser.endSession(request, reply, ctx.now());
    const next = afterLogout(logout);
    const front = ended?.sid
      ? await frontchannelLogouts(ctx.store, { issuer: ctx.config.issuer, sid: ended.sid })
      : null;
    if (!front || front.uris.length === 0) return reply.header('cache-control', 'no-store').redirect(next, 303);
    // Front-Channel Logout 1.0 §4: the clients' pages load here, then the browser goes on to `next`
    // (as node-oidc-provider answers the confirmation with its page of iframes, not a redirect).
    const page = { uris: front.uris, next: next === SIGNED_OUT ? null : next };
    return sendPage(reply, (ui) => frontchannelLogoutPage(ui, page), framingCsp(front.origins));
  });

  app.get(SIGNED_OUT, { config: { html: true } }, async (_request, reply) => sendPage(reply, signedOutPage));
}
