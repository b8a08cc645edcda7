// Adding parameters to a client's registered redirect URI, for authorization responses (RFC 6749
// §4.1.2) and the return after logout.

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
