// An API that accepts Tessera's access tokens: GET /apps needs the scope `apps`, GET /webhooks the
// scope `webhooks`. It describes itself with RFC 9728 metadata at /.well-known/oauth-protected-resource
// (plus the resource's path, if any), and every 401 names that document in WWW-Authenticate, so a client
// learns which authorization server to ask and which `resource` (RFC 8707) to ask for. Start it with
// `npm run example:api` while Tessera runs.
//
//   TESSERA_ISSUER        Tessera's issuer (default http://localhost:3000)
//   API_PORT              port (default 4000)
//   API_RESOURCE          this API's resource identifier, as registered at Tessera
//                         (default http://127.0.0.1:${API_PORT})
//   API_AUDIENCE          the `aud` to expect (default: the resource; set it to the issuer to accept
//                         tokens issued without a resource, which carry Tessera's default audience)
//   API_CLIENT_ID, API_CLIENT_SECRET   optional: a confidential client of Tessera's; with them every
//                         request also asks introspection, so revoked tokens are refused at once
import { createServer, type ServerResponse, type Server } from 'node:http';
import { pathToFileURL } from 'node:url';
import {
  BearerError,
  createProtectedResource,
  IntrospectionError,
  type ProtectedResourceOptions,
} from '@tessera-oidc/server/resource';

const ROUTES: Record<string, { scope: string; body: (sub: string) => unknown }> = {
  '/apps': { scope: 'apps', body: (sub) => ({ owner: sub, apps: [{ id: 'app_1', name: 'Example app' }] }) },
  '/webhooks': {
    scope: 'webhooks',
    body: (sub) => ({ owner: sub, webhooks: [{ id: 'wh_1', url: 'https://example.com/hook' }] }),
  },
};

export type ExampleApiOptions = Omit<ProtectedResourceOptions, 'scopes' | 'resourceName'>;

export function exampleApi(options: ExampleApiOptions): Server {
  const api = createProtectedResource({
    ...options,
    scopes: Object.values(ROUTES).map((route) => route.scope),
    resourceName: 'Example API',
  });
  const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

  return createServer(async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    // RFC 9728 §3: public, so any origin's client may read it.
    if (path === api.metadataPath && request.method === 'GET') {
      json(response, 200, api.metadata, { 'access-control-allow-origin': '*' });
      return;
    }
    const route = ROUTES[path];
    if (!route || request.method !== 'GET') {
      json(response, 404, { error: 'not_found' });
      return;
    }
    try {
      const token = await api.verify(request.headers.authorization, { scopes: [route.scope] });
      json(response, 200, route.body(token.sub));
    } catch (err) {
      if (err instanceof IntrospectionError) {
        // Not the request's fault: the API's setup or Tessera. Said in the log, 503 to the client.
        console.error(`GET ${path}: ${err.message}`);
        json(response, 503, { error: 'temporarily_unavailable' }, { 'retry-after': '5' });
        return;
      }
      if (!(err instanceof BearerError)) {
        console.error(`GET ${path} failed: ${err instanceof Error ? err.message : String(err)}`);
        json(response, 500, { error: 'server_error' });
        return;
      }
      // RFC 6750 §3.1: without a token, neither the challenge nor the body names an error code.
      const body = err.tokenMissing
        ? { error_description: err.message }
        : { error: err.code, error_description: err.message };
      json(response, err.status, body, { 'www-authenticate': err.wwwAuthenticate });
    }
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const issuer = process.env.TESSERA_ISSUER ?? 'http://localhost:3000';
  const id = process.env.API_CLIENT_ID;
  const secret = process.env.API_CLIENT_SECRET;
  const port = Number(process.env.API_PORT ?? 4000);
  const resource = process.env.API_RESOURCE ?? `http://127.0.0.1:${port}`;
  exampleApi({
    issuer,
    resource,
    ...(process.env.API_AUDIENCE ? { audience: process.env.API_AUDIENCE } : {}),
    ...(id && secret ? { introspection: { clientId: id, clientSecret: secret } } : {}),
  }).listen(port, '127.0.0.1', () => {
    const { metadataUrl } = createProtectedResource({ issuer, resource });
    console.log(`Example API on http://127.0.0.1:${port} for the resource ${resource}:`);
    console.log(`GET /apps (scope apps), GET /webhooks (scope webhooks), metadata at ${metadataUrl}`);
  });
}
