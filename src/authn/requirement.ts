// What a request needs of the session that answers it, as plain data: sealed in the interaction, carried
// by a sign-in between its steps, read by the policy (./policy.ts) and the sufficiency check
// (./sufficiency.ts). Beside the levels (./levels.ts) and nothing else, so that the steps and what
// carries a sign-in name it without importing the policy, which asks the list of steps.
import { Level } from './levels.ts';

/** What a request needs of the session that answers it. Sealed in the interaction: plain data. */
export interface Requirement {
  /** prompt=login (OIDC Core §3.1.2.1): a sign-in must happen during this request, whatever the session. */
  forceLogin: boolean;
  /** max_age (and prompt=login): the session's last factor at or after this time, epoch seconds; 0 for any. */
  freshSince: number;
  /** The lowest level the session must reach (./levels.ts). */
  level: Level;
  /** Steps the session must include whatever its level (e.g. a passkey an action insists on). */
  methods: string[];
  /** The acr values asked for (acr_values), in the order asked: the ID token's acr is chosen among them. */
  acrValues: string[];
  /** TESSERA_MFA when the requirement was made; absent: `optional`. `off` leaves out the switchable steps. */
  mfa?: MfaMode;
  /**
   * The operator's policy asks for two factors (TESSERA_MFA=required, the client's --require-mfa, a
   * scope of TESSERA_MFA_SCOPES): a user without a second factor enrols an authenticator app during
   * the sign-in rather than being refused.
   */
  enrol?: boolean;
}

/** TESSERA_MFA: authenticator apps and recovery codes off; offered; or a second factor required of everyone. */
export type MfaMode = 'off' | 'optional' | 'required';

/** Any sign-in: what the account page and a plain authorization request need. Shared, so frozen. */
export const ANY_SIGN_IN: Requirement = Object.freeze({
  forceLogin: false,
  freshSince: 0,
  level: Level.sfa,
  methods: Object.freeze([]) as readonly string[] as string[],
  acrValues: Object.freeze([]) as readonly string[] as string[],
});
