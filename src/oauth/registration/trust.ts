// How far Tessera trusts a client that registered itself (RFC 7591, or a Client ID Metadata Document)
// rather than being registered by the operator: what the pages say of it, and where Tessera may send
// a browser for it without the user having chosen to go there. Anyone may register such a client with
// any redirect URI, so an automatic redirect to one would make Tessera's address an open redirector
// (RFC 9700 §4.11.2): its errors go back only to a redirect URI on its metadata document's own host,
// and its users return after logout only when the request carries an ID token the client was issued
// (and, for a document's client, only to its own host).
import type { Client } from '../../store/clients.ts';

/**
 * What the sign-in, consent and sign-out pages say of who vouches for the client: the operator
 * registered it (nothing to say), it registered itself, or its https client_id names a metadata
 * document on `host`, whose name is the document's claim alone. `returnHost` is where the user goes next.
 */
export type ClientVetting =
  | { kind: 'operator' }
  | { kind: 'dynamic'; returnHost: string | null }
  | { kind: 'document'; host: string; returnHost: string | null };

export function clientVetting(client: Client, returnUri: string | null): ClientVetting {
  const returnHost = returnUri === null ? null : URL.parse(returnUri)?.host || returnUri;
  if (client.registeredVia === 'document') return { kind: 'document', host: documentHost(client)!, returnHost };
  if (client.registeredVia === 'dynamic') return { kind: 'dynamic', returnHost };
  return { kind: 'operator' };
}

/** The host of a metadata document's client_id URL; undefined for other clients. */
function documentHost(client: Client): string | undefined {
  return client.registeredVia === 'document' ? URL.parse(client.clientId)?.host : undefined;
}

/**
 * Whether an error of the authorization request may go back to the client as a redirect (RFC 6749
 * §4.1.2.1) with no page in between: always for the operator's clients; for a metadata document's
 * client only to an https URI on the document's own host, which the document's owner controls; for
 * a client registered at /oauth2/register (any host at all) never. Otherwise the error page says it.
 */
export function redirectsErrors(client: Client, redirectUri: string): boolean {
  if (client.registeredVia === 'operator') return true;
  return onDocumentHost(client, redirectUri);
}

/**
 * Why RP-initiated logout may not return to a registered post_logout_redirect_uri, or undefined when
 * it may: the operator's clients always; a client that registered itself only with an id_token_hint
 * it was issued (`hinted`: checked by the caller), and a document's client only to its own host.
 */
export function logoutReturnProblem(client: Client, uri: string, hinted: boolean): string | undefined {
  if (client.registeredVia === 'operator') return undefined;
  if (!hinted) return 'post_logout_redirect_uri needs an id_token_hint for a client that registered itself';
  if (client.registeredVia === 'document' && !onDocumentHost(client, uri)) {
    return "post_logout_redirect_uri must be on the host of the client's metadata document";
  }
  return undefined;
}

function onDocumentHost(client: Client, uri: string): boolean {
  const host = documentHost(client);
  const target = URL.parse(uri);
  return host !== undefined && target?.protocol === 'https:' && target.host === host;
}
