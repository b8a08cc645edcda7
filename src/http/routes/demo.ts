// Development only: the demo clients' redirect URI. It does what a client application does with the
// code — the token request — and shows the token response, so the whole flow can be tried in a browser.
import type { FastifyInstance } from 'fastify';
import { demoCallbackUri, type DemoCredentials } from '../../demo.ts';
import { escapeHtml } from '../../ui/html.ts';
import type { RouteContext } from '../context.ts';
import { sendHtml } from '../plugins/html.ts';

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/assets/tessera.css"></head>
<body><main class="card wide"><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}

export function demoRoutes(app: FastifyInstance, ctx: RouteContext, demo: DemoCredentials): void {
  app.get('/demo/callback', { config: { html: true } }, async (request, reply) => {
    const query = request.query as Record<string, string | undefined>;
    if (query.error) {
      return sendHtml(
        reply.code(400),
        page(
          'The authorization failed',
          `<p><code>${escapeHtml(query.error)}</code>: ${escapeHtml(query.error_description ?? '')}</p>`,
        ),
      );
    }
    if (!query.code)
      return sendHtml(reply.code(400), page('No code', '<p>This page expects a <code>code</code> parameter.</p>'));
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code: query.code,
      redirect_uri: demoCallbackUri(ctx.config),
    });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (query.state === 'public') {
      body.set('client_id', demo.public.clientId);
      body.set('code_verifier', demo.public.codeVerifier);
    } else {
      const { clientId, clientSecret } = demo.confidential;
      const basic = `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`;
      headers.authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
    }
    const address = app.server.address();
    const origin = typeof address === 'object' && address ? `http://127.0.0.1:${address.port}` : ctx.config.issuer;
    const response = await fetch(`${origin}/oauth2/token`, { method: 'POST', headers, body });
    const tokens = (await response.json()) as Record<string, unknown>;
    const decoded = ['access_token', 'id_token']
      .filter((name) => typeof tokens[name] === 'string')
      .map((name) => {
        const payload = JSON.parse(
          Buffer.from((tokens[name] as string).split('.')[1] ?? '', 'base64url').toString('utf8'),
        );
        return `<h2>${name} claims</h2><pre>${escapeHtml(JSON.stringify(payload, null, 2))}</pre>`;
      })
      .join('');
    const how =
      query.state === 'public'
        ? 'public client sent its PKCE code_verifier'
        : 'confidential client authenticated with HTTP Basic';
    const title = response.ok ? 'Tokens received' : 'The token request failed';
    const content = `<p>Redirected back with <code>iss=${escapeHtml(query.iss ?? '')}</code>; the ${how}.</p>
<h2>Token response</h2><pre>${escapeHtml(JSON.stringify(tokens, null, 2))}</pre>${decoded}`;
    return sendHtml(reply.code(response.ok ? 200 : 400), page(title, content));
  });
}
