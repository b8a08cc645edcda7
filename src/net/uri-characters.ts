// The characters a URI Tessera stores, compares or redirects to may hold: redirect URIs, logout
// redirect URIs and webhook URLs all go through this one rule.

/** Characters no URI Tessera stores, compares or redirects to may have. */
export const UNSAFE_URI_CHARACTERS = /[^\x21-\x7e]|\\/;

/** Why `uri` holds characters no URI may have (a fixed text, never the URI itself), or undefined. */
export function uriCharacterProblem(uri: string): string | undefined {
  return UNSAFE_URI_CHARACTERS.test(uri) ? 'must be printable ASCII, without spaces or backslashes' : undefined;
}
