// Grant types' names where more than one place needs them, and what goes with what: the CLI's client
// checks (src/cli/operations.ts) and the grants themselves read them from here.

/** RFC 8628 §3.4. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** The grants through which a person authorizes a client: a refresh token comes only with one of them. */
export const PERSON_GRANT_TYPES: readonly string[] = ['authorization_code', DEVICE_CODE_GRANT];
