// Headers for every server-rendered page.
import type { FastifyReply } from 'fastify';

// No form-action: Chromium applies it to the redirect after a form post, which must reach the
// client's redirect URI on another origin. Scripts only as files of our own (the passkey pages'
// /assets/passkeys.js and the library it uses, the front-channel logout page's), nothing inline.
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The pages' policy, with the origins a page may load in iframes (`frame-src`): the clients' pages
 * front-channel logout loads (src/oidc/frontchannel-logout.ts), and nothing else.
 */
export function framingCsp(origins: readonly string[]): string {
  return origins.length === 0 ? PAGE_CSP : `${PAGE_CSP}; frame-src ${origins.join(' ')}`;
}

export function sendHtml(reply: FastifyReply, body: string, csp = PAGE_CSP): FastifyReply {
  return (
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', csp)
      .header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff')
      // same-origin: no Referer leaves for another site (page URLs carry sealed requests), and the
      // browser names our origin on our own forms' POSTs, which the Origin check needs
      // (./same-origin.ts); with no-referrer Chromium sends `Origin: null`.
      .header('referrer-policy', 'same-origin')
      .header('cache-control', 'no-store')
      .send(body)
  );
}
