// Adding and removing an authenticator app. The page shows a new secret three ways (a QR code made
// here as SVG, the `otpauth://` link a phone opens in its app, the key to type) and the secret
// travels back with the form sealed, bound to the user and the browser, for ten minutes: nothing is
// stored until the user proves their app has it by typing its current code. The first second factor
// brings ten recovery codes (../recovery/), shown once. On the account page the changes need a recent
// sign-in (../recent.ts) and a removal ends the user's other sessions; during a sign-in that needs a
// second factor (TESSERA_MFA=required, ../policy.ts `enrol`), the enrolment is the step itself.
import QRCode from 'qrcode';
import { type Requester, securityEvent } from '../../events/index.ts';
import type { EventStore } from '../../store/events.ts';
import type { PasskeyStore } from '../../store/passkeys.ts';
import type { SecondFactorStore } from '../../store/second-factors.ts';
import type { User } from '../../store/users.ts';
import { encryptAtRest } from '../../tokens/at-rest.ts';
import { Sealer } from '../../tokens/sealed.ts';
import type { Secrets } from '../../tokens/secrets.ts';
import { recentSignIn } from '../recent.ts';
import { newRecoveryCodes, recoveryCodeHash } from '../recovery/codes.ts';
import type { BrowserSession } from '../session.ts';
import { shortfall } from '../sufficiency.ts';
import { matchingStep, newTotpSecret, otpauthUri, typedCode } from './code.ts';

/** How long the enrolment form may take. */
export const TOTP_ENROLMENT_TTL = 10 * 60;

interface Enrolment {
  userId: string;
  secret: string;
  browser: string;
  iat: number;
  exp: number;
}

export class TotpEnrolmentSealer extends Sealer<Enrolment> {
  constructor(secrets: Secrets) {
    super(secrets, 'tessera totp enrolment v1');
  }
}

export interface TotpEnrolmentDeps {
  store: SecondFactorStore & Pick<PasskeyStore, 'hasPasskeys'> & EventStore;
  secrets: Secrets;
  enrolments: TotpEnrolmentSealer;
  /** The name apps list the account under: the issuer's host. */
  issuerName: string;
}

/** A new secret as the page shows it. */
export interface TotpOffer {
  secret: string;
  uri: string;
  /** The QR code of `uri`, an SVG document made here. */
  qrSvg: string;
  /** The sealed enrolment the form sends back. */
  enrolment: string;
}

/** A new secret for `user`, sealed for this browser. */
export async function totpOffer(
  deps: Pick<TotpEnrolmentDeps, 'enrolments' | 'issuerName'>,
  input: { user: User; bind: () => string; now: number },
): Promise<TotpOffer> {
  const { user, now } = input;
  const secret = newTotpSecret();
  const uri = otpauthUri({ issuer: deps.issuerName, account: user.username, secret });
  const qrSvg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  const sealed = { userId: user.id, secret, browser: input.bind(), iat: now, exp: now + TOTP_ENROLMENT_TTL };
  return { secret, uri, qrSvg, enrolment: deps.enrolments.seal(sealed) };
}

/** The offer a sealed enrolment was made for, again (after a wrong code), if it is still good. */
export async function reofferTotp(
  deps: Pick<TotpEnrolmentDeps, 'enrolments' | 'issuerName'>,
  input: { user: User; enrolment: string | undefined; isBound: (browser: string) => boolean; now: number },
): Promise<TotpOffer | undefined> {
  const sealed = input.enrolment ? deps.enrolments.open(input.enrolment, input.now) : undefined;
  if (!sealed || sealed.userId !== input.user.id || !input.isBound(sealed.browser)) return undefined;
  const uri = otpauthUri({ issuer: deps.issuerName, account: input.user.username, secret: sealed.secret });
  const qrSvg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return { secret: sealed.secret, uri, qrSvg, enrolment: input.enrolment! };
}

export type EnrolTotpOutcome =
  /** Enrolled; the recovery codes made with it (none when the user had some already). */
  | { kind: 'enrolled'; recoveryCodes: string[] }
  | { kind: 'wrong-code' }
  /** The form is not this user's and browser's, or too old: a new secret is shown. */
  | { kind: 'expired' }
  | { kind: 'reauth' }
  /** The user has an authenticator app already. */
  | { kind: 'already' };

/**
 * Enrols the sealed secret when `code` is its current code. From the account page `session` is the
 * session, whose sign-in must have been recent when the form was shown; during a sign-in, none.
 */
export async function enrolTotp(
  deps: TotpEnrolmentDeps,
  input: {
    user: User;
    session: BrowserSession | null;
    enrolment: string | undefined;
    code: string | undefined;
    isBound: (browser: string) => boolean;
    clientId: string | null;
    requester: Requester;
    now: number;
  },
): Promise<EnrolTotpOutcome> {
  const { user, now, requester, clientId } = input;
  const sealed = input.enrolment ? deps.enrolments.open(input.enrolment, now) : undefined;
  if (!sealed || sealed.userId !== user.id || !input.isBound(sealed.browser)) return { kind: 'expired' };
  if (input.session && shortfall(input.session, user, recentSignIn(sealed.iat))) return { kind: 'reauth' };
  const typed = typedCode(input.code);
  const step = typed === undefined ? undefined : matchingStep(sealed.secret, typed, now);
  if (step === undefined) {
    const data = { method: 'totp', reason: 'wrong_code' };
    await deps.store.recordEvent(
      securityEvent('mfa.enrol_failed', now, { userId: user.id, clientId, requester, data }),
    );
    return { kind: 'wrong-code' };
  }
  const recoveryCodes = (await deps.store.hasRecoveryCodes(user.id)) ? [] : newRecoveryCodes();
  const data = { method: 'totp', recovery_codes: recoveryCodes.length };
  const enrolled = securityEvent('mfa.enrolled', now, { userId: user.id, clientId, requester, data });
  const credential = {
    userId: user.id,
    secretEnc: encryptAtRest(deps.secrets, 'totpSecret', sealed.secret),
    // The code just typed is spent: it does not sign in as well.
    lastStep: step,
    createdAt: now,
    lastUsedAt: null,
  };
  const hashes = recoveryCodes.map((code) => recoveryCodeHash(user.id, code));
  if (!(await deps.store.enrolTotp(credential, hashes, enrolled))) return { kind: 'already' };
  return { kind: 'enrolled', recoveryCodes };
}

export type RemoveTotpOutcome = { kind: 'removed' } | { kind: 'reauth' } | { kind: 'not-found' };

/**
 * Removes the user's authenticator app (recent sign-in needed) and ends their other sessions; their
 * recovery codes go with it when no passkey is left for them to stand in for.
 */
export async function removeTotp(
  deps: Pick<TotpEnrolmentDeps, 'store'>,
  input: { user: User; session: BrowserSession; requester: Requester; now: number },
): Promise<RemoveTotpOutcome> {
  const { user, now, requester } = input;
  if (shortfall(input.session, user, recentSignIn(now))) return { kind: 'reauth' };
  const recoveryCodes = !(await deps.store.hasPasskeys(user.id));
  const data = { method: 'totp', recovery_codes_removed: recoveryCodes };
  const removed = securityEvent('mfa.removed', now, { userId: user.id, requester, data });
  const done = await deps.store.removeTotp({ userId: user.id, keepSession: input.session.id, recoveryCodes }, removed);
  return done ? { kind: 'removed' } : { kind: 'not-found' };
}
