// The redirect URIs a client may register by itself (RFC 7591 registration, a Client ID Metadata
// Document), after RFC 9700 §2.1 and §4.1 and RFC 8252 §7: absolute, without a fragment or
// credentials; https, or http on a loopback address (a native app's local server; its port is free,
// ../redirect.ts), or a private-use scheme in reverse-domain form (a native app); never a scheme
// that runs or reads something in the browser. Only printable ASCII without spaces or backslashes
// (RFC 3986 §2): a URL parser drops tabs and newlines and reads `\` as `/`, so a string with them
// would be compared as one URI and followed as another, and a header cannot carry them. Scheme and
// host are case-insensitive (§6.2.2.1) and kept in lowercase, the form every match compares.
const FORBIDDEN_SCHEMES = new Set(['javascript', 'data', 'vbscript', 'file', 'blob', 'about', 'filesystem']);
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
/** RFC 8252 §7.1: e.g. com.example.app (a domain name the app's publisher controls, reversed). */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$/;

/** Characters no URI Tessera stores, compares or redirects to may have. */
export const UNSAFE_URI_CHARACTERS = /[^\x21-\x7e]|\\/;

/** The scheme and the authority (host and port: never credentials) in lowercase; the rest as it was. */
export function normalizeRedirectUri(uri: string): string {
  const start = /^([A-Za-z][A-Za-z0-9+.-]*:)(\/\/[^/?#]*)?/.exec(uri);
  if (!start) return uri;
  return `${start[1]!.toLowerCase()}${start[2]?.toLowerCase() ?? ''}${uri.slice(start[0].length)}`;
}

/** What is wrong with a redirect URI, or undefined: a fixed text, never the URI itself. */
export function redirectUriProblem(uri: string): string | undefined {
  if (UNSAFE_URI_CHARACTERS.test(uri)) return 'must be printable ASCII, without spaces or backslashes';
  const url = URL.parse(uri);
  if (!url || uri.length > 2000) return 'is not an absolute URI';
  if (uri.includes('#')) return 'must not contain a fragment';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  const scheme = url.protocol.slice(0, -1);
  if (FORBIDDEN_SCHEMES.has(scheme)) return 'uses a scheme that is never allowed';
  if (scheme === 'https') return undefined;
  if (scheme === 'http') {
    return LOOPBACK_HOSTS.has(url.hostname)
      ? undefined
      : 'must be https; http only on a loopback address (127.0.0.1, [::1], localhost)';
  }
  if (PRIVATE_USE_SCHEME.test(scheme)) return undefined;
  return 'must be https, http on a loopback address, or a private-use scheme in reverse-domain form (com.example.app:)';
}

/** A web page about the client (client_uri, logo_uri, tos_uri, policy_uri): https, or http on loopback. */
export function webUriProblem(uri: string): string | undefined {
  if (UNSAFE_URI_CHARACTERS.test(uri)) return 'must be printable ASCII, without spaces or backslashes';
  const url = URL.parse(uri);
  if (!url || uri.length > 2000) return 'is not an absolute URI';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) return undefined;
  return 'must be an https URL';
}
