// Matching a redirect URI to the registered ones (exactly; loopback ports are free, RFC 8252), and
// adding parameters to it, for authorization responses (RFC 6749 §4.1.2) and the return after logout.
import { normalizeRedirectUri } from './registration/redirect-rules.ts';

/**
 * The registered redirect URI (absolute, without a fragment: RFC 6749 §3.1.2, checked at
 * registration) with `params` added to its query, which it may already have, serialized as
 * URLSearchParams does (application/x-www-form-urlencoded). Built as a string: parsing the URI and
 * going through URLSearchParams cost more than the rest of issuing a code.
 */
export function redirectWith(redirectUri: string, params: Record<string, string | null>): string {
  let location = redirectUri;
  let separator = !redirectUri.includes('?') ? '?' : redirectUri.endsWith('?') || redirectUri.endsWith('&') ? '' : '&';
  for (const key in params) {
    const value = params[key];
    if (value === null || value === undefined) continue;
    location += `${separator}${formEncode(key)}=${formEncode(value)}`;
    separator = '&';
  }
  return location;
}

/**
 * application/x-www-form-urlencoded: encodeURIComponent, less the five characters it leaves and the
 * form encodes, and + for space.
 */
function formEncode(value: string): string {
  const encoded = encodeURIComponent(value);
  return FORM_EXTRA.test(encoded)
    ? encoded.replace(FORM_EXTRA_ALL, (c) => (c === '%20' ? '+' : `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    : encoded;
}
const FORM_EXTRA = /[!'()~]|%20/;
const FORM_EXTRA_ALL = /[!'()~]|%20/g;

/** `http://127.0.0.1:PORT`, `http://[::1]:PORT` or `http://localhost:PORT` at the start of a URI. */
const LOOPBACK_WITH_PORT = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost):\d{1,5}(?=[/?]|$)/;

/**
 * RFC 6749 §3.1.2.3: the redirect URI must be one registered, exactly; except that a loopback URI
 * registered without a port matches any port (RFC 8252 §7.3, §8.3: a native app listens on a port
 * the system gives it), its path and query still exactly. Registered URIs have their scheme and host
 * in lowercase (./registration/redirect-rules.ts); a request that writes them otherwise names the
 * same URI (RFC 3986 §6.2.2.1), and is compared so only when the exact comparison failed.
 */
export function isRegisteredRedirectUri(registered: readonly string[], requested: string): boolean {
  if (matches(registered, requested)) return true;
  const normalized = normalizeRedirectUri(requested);
  return normalized !== requested && matches(registered, normalized);
}

function matches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const match = LOOPBACK_WITH_PORT.exec(requested);
  return match !== null && registered.includes(`http://${match[1]}${requested.slice(match[0].length)}`);
}
