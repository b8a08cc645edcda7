// Tessera as a WebAuthn relying party (W3C WebAuthn Level 3), with @simplewebauthn/server: the
// options a page hands to the browser, and the checks of what the browser sends back. The relying
// party's ID is the issuer's host and the only origin accepted is the issuer's (§5.1.4.1, §7.1 step
// 9); each challenge is a sealed ceremony (./ceremony.ts).
import type { RestoreEpoch } from '../../tokens/epoch.ts';
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { decodeClientDataJSON, parseAuthenticatorData } from '@simplewebauthn/server/helpers';
import { isIP } from 'node:net';
import { z } from 'zod';
import type { Passkey } from '../../store/passkeys.ts';
import type { User } from '../../store/users.ts';
import { Ceremonies, type CeremonyPurpose, type OpenedCeremony } from './ceremony.ts';
import { counterWentBack } from './suspension.ts';
import type { Secrets } from '../../tokens/secrets.ts';

/** Why a passkey was refused: the `reason` of its event. */
export type PasskeyFailure =
  /** Not a WebAuthn response at all. */
  | 'malformed'
  /** A challenge Tessera did not give this browser for this, or expired. */
  | 'challenge'
  /** A challenge answered before. */
  | 'replayed'
  | 'unknown_passkey'
  | 'disabled'
  /** Made for another site: the browser's origin is not the issuer's. */
  | 'wrong_origin'
  /** No PIN or biometric where one is required (a sign-in without a password). */
  | 'user_not_verified'
  /** The signature counter went back: a cloned authenticator? (WebAuthn §6.1.1) The passkey is suspended. */
  | 'counter'
  /** Suspended since its counter went back: refused until its user removes it. */
  | 'suspended'
  /** The signature, the relying party's ID or anything else the library refused. */
  | 'invalid'
  | 'already_registered';

export type Refused = { ok: false; reason: PasskeyFailure; detail?: string };

/**
 * The signature algorithms accepted (COSE ids, WebAuthn §5.4 `pubKeyCredParams`): EdDSA, ES256 and
 * RS256, what authenticators make; not the library's newer default of ML-DSA first, which Node.js
 * runs only as an experimental feature (with a warning in the log).
 */
const ALGORITHMS = [-8, -7, -257];

/** How long the browser's own prompt stays open (WebAuthn §5.4 `timeout`, ms). */
const PROMPT_TIMEOUT = 5 * 60 * 1000;

const base64url = z.string().regex(/^[A-Za-z0-9_-]+$/);
const credentialFields = {
  id: base64url.max(1400),
  rawId: base64url.max(1400),
  type: z.literal('public-key'),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
};
const assertionSchema = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: base64url,
    authenticatorData: base64url,
    signature: base64url,
    userHandle: base64url.optional(),
  }),
});
const registrationSchema = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: base64url,
    attestationObject: base64url,
    authenticatorData: base64url.optional(),
    transports: z.array(z.string().max(32)).max(16).optional(),
    publicKeyAlgorithm: z.number().optional(),
    publicKey: base64url.optional(),
  }),
});

/** A form field holding what @simplewebauthn/browser's startAuthentication returned, as JSON. */
export function parseAssertion(json: string | undefined): AuthenticationResponseJSON | undefined {
  return parseJson(assertionSchema, json) as AuthenticationResponseJSON | undefined;
}

/** A form field holding what startRegistration returned, as JSON. */
export function parseRegistration(json: string | undefined): RegistrationResponseJSON | undefined {
  return parseJson(registrationSchema, json) as RegistrationResponseJSON | undefined;
}

function parseJson(schema: z.ZodType, json: string | undefined): unknown {
  if (!json) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The user handle of `user` (WebAuthn §14.6.1: not personal): the bytes of Tessera's random user id. */
export function userHandleOf(user: Pick<User, 'id'>): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(user.id, 'utf8'));
}

const descriptor = (p: Passkey) => ({ id: p.credentialId, transports: p.transports });

export class RelyingParty {
  /** The relying party's ID: the issuer's host (WebAuthn §5.1.4.1 `rp.id`). */
  readonly id: string;
  /** The one origin a response may come from: the issuer's. */
  readonly origin: string;
  readonly ceremonies: Ceremonies;
  /**
   * Whether browsers can use passkeys here: an IP address cannot be a relying party's ID (WebAuthn
   * §5.1.4.1 wants a domain), so an issuer such as http://127.0.0.1:3000 offers none.
   */
  readonly usable: boolean;

  constructor(issuer: string, secret: Secrets, restoreEpoch: RestoreEpoch = '') {
    const url = new URL(issuer);
    this.id = url.hostname;
    this.origin = url.origin;
    this.usable = isIP(url.hostname.replace(/^\[(.*)\]$/, '$1')) === 0;
    this.ceremonies = new Ceremonies(secret, restoreEpoch);
  }

  /**
   * A sign-in: without `user`, with any passkey of this site the browser has (discoverable) and user
   * verification required; with `user` (a later step), one of theirs, user verification preferred.
   */
  authenticationOptions(
    input: { browser: string; now: number } & ({ user?: undefined } | { user: User; passkeys: Passkey[] }),
  ): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const userId = input.user?.id ?? null;
    const challenge = this.ceremonies.challenge({ purpose: 'authenticate', userId, browser: input.browser }, input.now);
    return generateAuthenticationOptions({
      rpID: this.id,
      challenge,
      timeout: PROMPT_TIMEOUT,
      userVerification: input.user ? 'preferred' : 'required',
      // Not a suspended one (./suspension.ts): the browser offers those that can still sign in.
      ...(input.user ? { allowCredentials: input.passkeys.filter((p) => p.suspendedAt === null).map(descriptor) } : {}),
    });
  }

  /**
   * A new passkey of `user`: discoverable (a resident key, so it can sign in without a username), user
   * verification preferred (required only when it signs in alone), none of the user's own again.
   */
  registrationOptions(input: {
    user: User;
    passkeys: Passkey[];
    browser: string;
    now: number;
  }): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const { user } = input;
    const challenge = this.ceremonies.challenge(
      { purpose: 'register', userId: user.id, browser: input.browser },
      input.now,
    );
    return generateRegistrationOptions({
      rpName: this.id,
      rpID: this.id,
      userName: user.username,
      userID: userHandleOf(user),
      userDisplayName: user.name ?? user.username,
      challenge,
      timeout: PROMPT_TIMEOUT,
      attestationType: 'none',
      supportedAlgorithmIDs: ALGORITHMS,
      excludeCredentials: input.passkeys.map(descriptor),
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'preferred' },
    });
  }

  /** The ceremony a response answers (./ceremony.ts), if it is one Tessera gave this browser for `purpose`. */
  openCeremony(
    clientDataJSON: string,
    input: { purpose: CeremonyPurpose; isBound: (browser: string) => boolean; now: number },
  ): OpenedCeremony | undefined {
    const challenge = clientDataOf(clientDataJSON)?.challenge;
    return typeof challenge === 'string' ? this.ceremonies.open(challenge, input) : undefined;
  }

  /**
   * Checks an assertion (WebAuthn §7.2) made with `passkey` against the ceremony it answers. The
   * counter is judged only once the signature verifies: a counter gone back then says the authenticator
   * was cloned (and suspends the passkey), which an assertion anyone could make up must never do.
   */
  async verifyAssertion(input: {
    response: AuthenticationResponseJSON;
    opened: OpenedCeremony;
    passkey: Passkey;
    requireUserVerification: boolean;
  }): Promise<{ ok: true; counter: number; backupEligible: boolean; backedUp: boolean } | Refused> {
    const { response, passkey } = input;
    const wrongOrigin = this.#originRefused(response.response.clientDataJSON);
    if (wrongOrigin) return wrongOrigin;
    let flags;
    try {
      ({ flags } = parseAuthenticatorData(Buffer.from(response.response.authenticatorData, 'base64url')));
    } catch (err) {
      return { ok: false, reason: 'invalid', detail: messageOf(err) };
    }
    if (input.requireUserVerification && !flags.uv) return { ok: false, reason: 'user_not_verified' };
    try {
      const { verified, authenticationInfo } = await verifyAuthenticationResponse({
        response,
        ...this.#expected(input.opened),
        // The counter is ours to judge, after the signature (below): the library's check would come first.
        credential: { id: passkey.credentialId, publicKey: passkey.publicKey, counter: 0 },
        requireUserVerification: input.requireUserVerification,
      });
      if (!verified) return { ok: false, reason: 'invalid', detail: 'the signature does not verify' };
      const counter = authenticationInfo.newCounter;
      if (counterWentBack(passkey.counter, counter)) {
        return { ok: false, reason: 'counter', detail: `counter ${counter} after ${passkey.counter}` };
      }
      return {
        ok: true,
        counter: authenticationInfo.newCounter,
        backupEligible: authenticationInfo.credentialDeviceType === 'multiDevice',
        backedUp: authenticationInfo.credentialBackedUp,
      };
    } catch (err) {
      return { ok: false, reason: 'invalid', detail: messageOf(err) };
    }
  }

  /** Checks a registration (WebAuthn §7.1); attestation is not asked for ('none'), so none is judged. */
  async verifyRegistration(input: {
    response: RegistrationResponseJSON;
    opened: OpenedCeremony;
  }): Promise<
    | ({ ok: true } & Pick<
        Passkey,
        'credentialId' | 'publicKey' | 'counter' | 'transports' | 'backupEligible' | 'backedUp'
      >)
    | Refused
  > {
    const { response } = input;
    const wrongOrigin = this.#originRefused(response.response.clientDataJSON);
    if (wrongOrigin) return wrongOrigin;
    try {
      const { verified, registrationInfo } = await verifyRegistrationResponse({
        response,
        ...this.#expected(input.opened),
        requireUserVerification: false,
        supportedAlgorithmIDs: ALGORITHMS,
      });
      if (!verified) return { ok: false, reason: 'invalid', detail: 'the registration does not verify' };
      const { credential } = registrationInfo;
      return {
        ok: true,
        credentialId: credential.id,
        publicKey: credential.publicKey,
        counter: credential.counter,
        transports: response.response.transports ?? [],
        backupEligible: registrationInfo.credentialDeviceType === 'multiDevice',
        backedUp: registrationInfo.credentialBackedUp,
      };
    } catch (err) {
      return { ok: false, reason: 'invalid', detail: messageOf(err) };
    }
  }

  /**
   * What either ceremony's response must show (WebAuthn §7.1 steps 8, 9 and 13, §7.2 steps 12, 13 and
   * 15): the challenge this ceremony opened with, this site's origin and this relying party's id.
   */
  #expected(opened: OpenedCeremony) {
    return { expectedChallenge: opened.challenge, expectedOrigin: this.origin, expectedRPID: this.id };
  }

  /** WebAuthn §7.1 step 9, §7.2 step 13: made on this site, never relayed from a look-alike. */
  #originRefused(clientDataJSON: string): Refused | undefined {
    const origin = clientDataOf(clientDataJSON)?.origin;
    if (origin === this.origin) return undefined;
    return { ok: false, reason: 'wrong_origin', detail: `origin ${String(origin).slice(0, 200)}` };
  }
}

function clientDataOf(clientDataJSON: string): { challenge?: unknown; origin?: unknown } | undefined {
  try {
    return decodeClientDataJSON(clientDataJSON) as { challenge?: unknown; origin?: unknown };
  } catch {
    return undefined;
  }
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 300);
