// What the sign-in pages share for passkeys: the options of a password-less sign-in (the sign-in
// page's button and its username field's autofill), and what a failed one says.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PasskeyFailure } from '../authn/passkeys/relying-party.ts';
import type { Text } from '../ui/layout.ts';
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
export function passkeyErrorCode(reason: PasskeyFailure | string): 'passkey_expired' | 'passkey_failed' {
  const expired: readonly string[] = ['challenge', 'replayed'] satisfies PasskeyFailure[];
  return expired.includes(reason) ? 'passkey_expired' : 'passkey_failed';
}

const SIGN_IN_ERRORS: Record<string, Text> = {
  login_failed: LOGIN_FAILED,
  passkey_failed: { key: 'passkey.failed' },
  passkey_expired: { key: 'passkey.expired' },
};

/** What the sign-in page says for its `error` query value, if anything. */
export function signInError(code: string | undefined): { error: Text } | Record<string, never> {
  const error = code === undefined ? undefined : SIGN_IN_ERRORS[code];
  return error ? { error } : {};
}

const PASSKEY_NOTES: Record<string, { text: Text; error: boolean }> = {
  added: { text: { key: 'passkeys.note.added' }, error: false },
  renamed: { text: { key: 'passkeys.note.renamed' }, error: false },
  removed: { text: { key: 'passkeys.note.removed' }, error: false },
  failed: { text: { key: 'passkeys.note.failed' }, error: true },
  registered: { text: { key: 'passkeys.note.registered' }, error: true },
  'no-name': { text: { key: 'passkeys.note.noName' }, error: true },
  last: { text: { key: 'passkeys.note.last' }, error: true },
};

/** What the account page's passkeys section says after a change (its `passkey` query value), if anything. */
export function passkeyNote(code: string | undefined): { text: Text; error: boolean } | undefined {
  return code === undefined ? undefined : PASSKEY_NOTES[code];
}

const STEP_ERRORS: Record<string, Text> = {
  passkey_failed: { key: 'passkey.step.failed' },
  passkey_expired: { key: 'passkey.expired' },
};

/** What a passkey step's page says for its `error` query value, if anything. */
export function stepError(code: string | undefined): { error: Text } | Record<string, never> {
  const error = code === undefined ? undefined : STEP_ERRORS[code];
  return error ? { error } : {};
}
