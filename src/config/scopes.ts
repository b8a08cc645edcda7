// The scopes Tessera ships, with the English descriptions the consent page shows (the catalogues
// translate them, src/ui/scopes.ts): OpenID Connect's and Tessera's own, and the APIs' by default.

export const OIDC_SCOPES: ReadonlyArray<readonly [string, string]> = [
  ['openid', 'Sign you in with your account'],
  ['profile', 'Your name and username'],
  ['email', 'Your email address'],
  ['address', 'Your postal address'],
  ['phone', 'Your phone number'],
  // The user's roles in the tokens (src/tokens/claims.ts).
  ['roles', 'Your roles'],
  // Never granted through consent alone (src/oauth/scopes.ts): for admin clients and admin users only.
  ['admin', 'Administer this server'],
];

/** Default API scopes with the description shown on the consent page (TESSERA_API_SCOPES). */
export const DEFAULT_API_SCOPES = 'apps=Manage your apps;webhooks=Manage your webhooks';
