// The redirect URIs a client may register by itself (RFC 7591 registration, a Client ID Metadata
// Document), after RFC 9700 §2.1 and §4.1 and RFC 8252 §7: absolute, without a fragment or
// credentials; https, or http on a loopback address (a native app's local server; its port is free,
// ../redirect.ts), or a private-use scheme in reverse-domain form (a native app); never a scheme
// that runs or reads something in the browser. Only printable ASCII without spaces or backslashes
// (RFC 3986 §2): a URL parser drops tabs and newlines and reads `\` as `/`, so a string with them
// would be compared as one URI and followed as another, and a header cannot carry them. Scheme and
// host are case-insensitive (§6.2.2.1) and kept in lowercase, the form every match compares.
// No IP address for a host, but a native app's loopback written `127.0.0.1` or `[::1]` over http
// (RFC 8252 §7.3, §8.3); and no `*` anywhere, since nothing matches a redirect URI but itself
// (RFC 9700 §2.1, §4.1.3).
import { uriCharacterProblem } from '../../net/uri-characters.ts';

const FORBIDDEN_SCHEMES = new Set(['javascript', 'data', 'vbscript', 'file', 'blob', 'about', 'filesystem']);
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
/** RFC 8252 §7.1: e.g. com.example.app (a domain name the app's publisher controls, reversed). */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$/;

/** The scheme and the authority (host and port: never credentials) in lowercase; the rest as it was. */
export function normalizeRedirectUri(uri: string): string {
  const start = /^([A-Za-z][A-Za-z0-9+.-]*:)(\/\/[^/?#]*)?/.exec(uri);
  if (!start) return uri;
  return `${start[1]!.toLowerCase()}${start[2]?.toLowerCase() ?? ''}${uri.slice(start[0].length)}`;
}

/** What is wrong with a redirect URI, or undefined: a fixed text, never the URI itself. */
export function redirectUriProblem(uri: string): string | undefined {
  const characters = uriCharacterProblem(uri);
  if (characters) return characters;
  const url = URL.parse(uri);
  if (!url || uri.length > 2000) return 'is not an absolute URI';
  if (uri.includes('#')) return 'must not contain a fragment';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  const scheme = url.protocol.slice(0, -1);
  if (FORBIDDEN_SCHEMES.has(scheme)) return 'uses a scheme that is never allowed';
  // RFC 9700 §4.1.3: redirect URIs are compared exactly; a `*` would be taken for a pattern by whoever
  // reads the registration, and matched by nothing.
  if (uri.includes('*')) return 'must not contain *: a redirect URI is matched exactly, never as a pattern';
  if (scheme === 'https' || scheme === 'http') return webRedirectUriProblem(uri, url);
  if (PRIVATE_USE_SCHEME.test(scheme)) return undefined;
  return 'must be https, http on a loopback address, or a private-use scheme in reverse-domain form (com.example.app:)';
}

/**
 * An https URI, or http on loopback (RFC 8252 §7.3: a native app's local server). An IP address names
 * no one the client answers for, and may be one of our own network's, so none is a host but
 * loopback over http, written as RFC 8252 §8.3 writes it: every IPv4 address however written (a URL
 * parser reads 2130706433, 0x7f.1 and 017700000001 as 127.0.0.1), every IPv6 literal but `[::1]`.
 */
function webRedirectUriProblem(uri: string, url: URL): string | undefined {
  const loopback = LOOPBACK_HOSTS.has(url.hostname) && writtenHost(uri) === url.hostname;
  if (IP_ADDRESS.test(url.hostname) && !(url.protocol === 'http:' && loopback)) {
    return 'must not have an IP address for its host but loopback over http (http://127.0.0.1, http://[::1])';
  }
  if (url.protocol === 'https:' || loopback) return undefined;
  return 'must be https; http only on a loopback address (127.0.0.1, [::1], localhost)';
}

/** An IPv4 address as a URL parser writes it, or an IPv6 literal. */
const IP_ADDRESS = /^(\d{1,3}(\.\d{1,3}){3}|\[[\d.:a-f]*\])$/;

/** The host as the URI writes it (no port), in lowercase. */
function writtenHost(uri: string): string {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(uri)?.[1] ?? '';
  const host = authority.startsWith('[') ? authority.slice(0, authority.indexOf(']') + 1) : authority.split(':')[0]!;
  return host.toLowerCase();
}

/** A web page about the client (client_uri, logo_uri, tos_uri, policy_uri): https, or http on loopback. */
export function webUriProblem(uri: string): string | undefined {
  const characters = uriCharacterProblem(uri);
  if (characters) return characters;
  const url = URL.parse(uri);
  if (!url || uri.length > 2000) return 'is not an absolute URI';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) return undefined;
  return 'must be an https URL';
}

/**
 * A client's backchannel_logout_uri (Back-Channel Logout 1.0 §2.2) or frontchannel_logout_uri
 * (Front-Channel Logout 1.0 §2): an absolute https URL without a fragment, or http on loopback, as the
 * pages about it. The first is posted to through the outbound guard (src/net/outbound.ts), which
 * refuses private addresses unless TESSERA_OUTBOUND_ALLOW_PRIVATE; the second is loaded by the browser.
 */
export function logoutUriProblem(uri: string): string | undefined {
  const problem = webUriProblem(uri);
  if (problem) return problem;
  if (uri.includes('#')) return 'must not contain a fragment';
  return undefined;
}
