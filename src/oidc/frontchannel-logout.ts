// OpenID Connect Front-Channel Logout 1.0: as RP-initiated logout ends the browser's session, the page
// that says so loads, in a hidden iframe each (§3, §4), the frontchannel_logout_uri of every client
// signed in from it (a grant with its `sid`), with `iss` and `sid` for a client registered with
// frontchannel_logout_session_required (§2), as node-oidc-provider does. The other ends of a session
// (an operator's, a password reset) have no browser of the person's to load them in: back-channel
// logout (./logout-token.ts) tells those.
import type { ClientStore } from '../store/clients.ts';

/** The addresses the signed-out page loads for the session `sid`, and their origins (its CSP's frame-src). */
export async function frontchannelLogouts(
  store: Pick<ClientStore, 'listFrontchannelLogouts'>,
  input: { issuer: string; sid: string },
): Promise<{ uris: string[]; origins: string[] }> {
  const logouts = await store.listFrontchannelLogouts(input.sid);
  const urls = logouts.map(({ uri, sessionRequired }) => {
    const url = new URL(uri);
    if (sessionRequired) {
      url.searchParams.set('iss', input.issuer);
      url.searchParams.set('sid', input.sid);
    }
    return url;
  });
  return { uris: urls.map((url) => url.href), origins: [...new Set(urls.map((url) => url.origin))] };
}
