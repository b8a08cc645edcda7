// An API that accepts Tessera's access tokens: GET /apps needs the scope `apps`, GET /webhooks the
// scope `webhooks`. Start it with `npm run example:api` while Tessera runs.
//
//   TESSERA_ISSUER        Tessera's issuer (default http://localhost:3000)
//   API_AUDIENCE          the `aud` to expect (default: the issuer, Tessera's default audience)
//   API_PORT              port (default 4000)
//   API_CLIENT_ID, API_CLIENT_SECRET   optional: a confidential client of Tessera's; with them every
//                         request also asks introspection, so revoked tokens are refused at once
import { createServer, type Server } from 'node:http';
import { pathToFileURL } from 'node:url';
import { BearerError, createVerifier, type VerifierOptions } from 'tessera/resource';

const ROUTES: Record<string, { scope: string; body: (sub: string) => unknown }> = {
  '/apps': { scope: 'apps', body: (sub) => ({ owner: sub, apps: [{ id: 'app_1', name: 'Example app' }] }) },
  '/webhooks': {
    scope: 'webhooks',
    body: (sub) => ({ owner: sub, webhooks: [{ id: 'wh_1', url: 'https://example.com/hook' }] }),
  },
};

export function exampleApi(options: VerifierOptions): Server {
  const verify = createVerifier(options);
  return createServer(async (request, response) => {
    const route = ROUTES[new URL(request.url ?? '/', 'http://localhost').pathname];
    if (!route || request.method !== 'GET') {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      return;
    }
    try {
      const token = await verify(request.headers.authorization, { scopes: [route.scope] });
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(route.body(token.sub)));
    } catch (err) {
      if (!(err instanceof BearerError)) {
        response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"server_error"}');
        return;
      }
      response
        .writeHead(err.status, { 'content-type': 'application/json', 'www-authenticate': err.wwwAuthenticate })
        .end(JSON.stringify({ error: err.code, error_description: err.message }));
    }
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const issuer = process.env.TESSERA_ISSUER ?? 'http://localhost:3000';
  const id = process.env.API_CLIENT_ID;
  const secret = process.env.API_CLIENT_SECRET;
  const port = Number(process.env.API_PORT ?? 4000);
  exampleApi({
    issuer,
    audience: process.env.API_AUDIENCE ?? issuer,
    ...(id && secret ? { introspection: { clientId: id, clientSecret: secret } } : {}),
  }).listen(port, '127.0.0.1', () => {
    console.log(`Example API on http://127.0.0.1:${port}: GET /apps (scope apps), GET /webhooks (scope webhooks)`);
  });
}
