// The levels of assurance a sign-in reaches, as `acr` values (OIDC Core §2). A module of its own with
// no imports, so that what only names a level (the discovery metadata, the config) loads nothing else.

/**
 * The levels a session reaches, lowest first, as `acr` values (advertised as acr_values_supported):
 * any sign-in; two factors; a phishing-resistant factor (a passkey: bound to our origin), which
 * implies two (a passkey signs in only with user verification). Absolute URIs, as OIDC Core §2 asks
 * of acr values that are not registered names; in Tessera's own namespace because no registered
 * set says exactly this and nothing more (see README, "Authentication methods and levels").
 */
export const ACR_VALUES = ['urn:tessera:acr:sfa', 'urn:tessera:acr:mfa', 'urn:tessera:acr:phr'] as const;
export type AcrValue = (typeof ACR_VALUES)[number];

/** A level: 0 for none, else 1 + its index in ACR_VALUES. */
export const Level = { none: 0, sfa: 1, mfa: 2, phr: 3 } as const;
export type Level = (typeof Level)[keyof typeof Level];

/** The level an acr value names; undefined for a value Tessera does not know (acr_values are voluntary). */
export function levelOfAcr(acr: string): Level | undefined {
  const index = ACR_VALUES.indexOf(acr as AcrValue);
  return index < 0 ? undefined : ((index + 1) as Level);
}
