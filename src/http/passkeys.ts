// What the sign-in pages share for passkeys: the options of a password-less sign-in (the sign-in
// page's button and its username field's autofill), and what a failed one says.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PasskeyFailure } from '../authn/passkeys/relying-party.ts';
import { LOGIN_FAILED } from '../ui/pages.ts';
import type { RouteContext } from './context.ts';

/**
 * The options of a sign-in with any passkey of this site, as JSON, bound to this browser; undefined
 * where browsers cannot use passkeys (an issuer at an IP address).
 */
export async function passkeySignInOptions(
  ctx: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<string | undefined> {
  if (!ctx.relyingParty.usable) return undefined;
  const options = await ctx.relyingParty.authenticationOptions({
    browser: ctx.browser.binding(request, reply),
    now: ctx.now(),
  });
  return JSON.stringify(options);
}

/** The `error` a sign-in page is sent back with after a failed passkey: nothing said of why, but an expiry. */
export function passkeyErrorCode(reason: PasskeyFailure): 'passkey_expired' | 'passkey_failed' {
  return reason === 'challenge' || reason === 'replayed' ? 'passkey_expired' : 'passkey_failed';
}

const SIGN_IN_ERRORS: Record<string, string> = {
  login_failed: LOGIN_FAILED,
  passkey_failed: 'That passkey could not sign you in. Try again, or use your password.',
  passkey_expired: 'The passkey request expired. Try again.',
};

/** What the sign-in page says for its `error` query value, if anything. */
export function signInError(code: string | undefined): { error: string } | Record<string, never> {
  const error = code === undefined ? undefined : SIGN_IN_ERRORS[code];
  return error ? { error } : {};
}

const PASSKEY_NOTES: Record<string, { text: string; error: boolean }> = {
  added: { text: 'Your passkey has been added.', error: false },
  renamed: { text: 'Your passkey has been renamed.', error: false },
  removed: { text: 'The passkey has been removed, and your other sessions have ended.', error: false },
  failed: { text: 'The passkey could not be added. Try again.', error: true },
  registered: { text: 'That passkey is registered already.', error: true },
  'no-name': { text: 'A passkey needs a name.', error: true },
  last: { text: 'That passkey is your only way to sign in: add another one before removing it.', error: true },
};

/** What the account page's passkeys section says after a change (its `passkey` query value), if anything. */
export function passkeyNote(code: string | undefined): { text: string; error: boolean } | undefined {
  return code === undefined ? undefined : PASSKEY_NOTES[code];
}

const STEP_ERRORS: Record<string, string> = {
  passkey_failed: 'That passkey could not confirm it is you. Try again.',
  passkey_expired: 'The passkey request expired. Try again.',
};

/** What a passkey step's page says for its `error` query value, if anything. */
export function stepError(code: string | undefined): { error: string } | Record<string, never> {
  const error = code === undefined ? undefined : STEP_ERRORS[code];
  return error ? { error } : {};
}
