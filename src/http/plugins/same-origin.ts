// Our own pages' forms are posted from our own pages, never from another site's: a POST to a route
// marked `sameOrigin` (sign-in, consent, sign-out confirmation, the account page's actions) is
// refused with 403 when the browser says it comes from elsewhere: `Sec-Fetch-Site` other than
// `same-origin` or `none` (the user typed it), or an `Origin` other than the issuer's. A request with
// neither (an old browser, a script) is judged by its form token alone (../browser.ts). Endpoints
// that clients reach across sites by design (POST /oauth2/authorize, RP-initiated POST
// /oauth2/logout, which only shows the confirmation, the token endpoint and the other back-channel
// endpoints) are not marked.
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import { csrfFailedPage } from '../outcome.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** POSTs to this route must come from the issuer's own pages. */
    sameOrigin?: boolean;
  }
}

/**
 * Adds the check to the routes marked `sameOrigin`, as a preHandler of their own: no other route
 * (the token endpoint above all) runs any of it.
 */
export function registerSameOrigin(app: FastifyInstance, issuer: string): void {
  const issuerOrigin = new URL(issuer).origin;
  const check: preHandlerAsyncHookHandler = async (request, reply) => {
    const site = request.headers['sec-fetch-site'];
    const origin = request.headers.origin;
    const foreignSite = site !== undefined && site !== 'same-origin' && site !== 'none';
    if (foreignSite || (origin !== undefined && origin !== issuerOrigin)) {
      request.log.info({ site, origin }, 'form refused: posted from another site');
      return csrfFailedPage(reply);
    }
  };
  app.addHook('onRoute', (route) => {
    if (!route.config?.sameOrigin) return;
    const existing = route.preHandler === undefined ? [] : [route.preHandler].flat();
    route.preHandler = [check, ...existing];
  });
}
