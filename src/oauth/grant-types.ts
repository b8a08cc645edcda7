// Grant types' names where more than one place needs them, and what goes with what: the CLI's client
// checks (src/admin/client-rules.ts) and the grants themselves read them from here.

/** RFC 8628 §3.4. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** RFC 8693 §2.1. */
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** RFC 7523 §2.1: here, for ID-JAGs (draft-ietf-oauth-identity-assertion-authz-grant). */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** The grants through which a person authorizes a client: a refresh token comes only with one of them. */
export const PERSON_GRANT_TYPES: readonly string[] = ['authorization_code', DEVICE_CODE_GRANT];
