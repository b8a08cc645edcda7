// Which browser origins may call the token, userinfo and revocation endpoints for a client
// (draft-ietf-oauth-browser-based-apps, CORS): its allowed origins, and for a public client the
// origins of its http(s) redirect URIs, where the app that runs in the browser lives.
import type { Client, ClientStore } from '../store/clients.ts';

export function allowedOrigins(client: Client): string[] {
  const origins = new Set(client.allowedOrigins);
  if (client.tokenEndpointAuthMethod === 'none') {
    for (const uri of client.redirectUris) {
      if (/^https?:\/\//.test(uri)) origins.add(new URL(uri).origin);
    }
  }
  return [...origins];
}

export function isOriginAllowed(client: Client, origin: string): boolean {
  return allowedOrigins(client).includes(origin);
}

/** Whether `origin` may read the answers for the client named `clientId` (unknown clients: no). */
export async function originAllowedFor(store: ClientStore, clientId: string | undefined, origin: string) {
  const client = clientId === undefined ? undefined : await store.getClient(clientId);
  return client !== undefined && isOriginAllowed(client, origin);
}
