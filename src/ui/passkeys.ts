// The passkey parts of the pages: the sign-in page's button (and its username field's autofill), the
// page of a passkey as a later step, and the account page's passkeys section. Each WebAuthn call is
// made by /assets/passkeys.js from a form marked `data-passkey`, whose options come in `data-options`;
// such a form is `hidden` until the script finds a browser that can use passkeys, so without
// JavaScript it is simply not there and the rest of the page works as before.
import type { PasskeyListing } from '../authn/passkeys/enrolment.ts';
import { html, type SafeHtml } from './html.ts';
import { layout } from './pages.ts';

/** The scripts of a page with passkeys: @simplewebauthn/browser's bundle, then ours (src/ui/assets/passkeys.js). */
export const PASSKEY_SCRIPTS = ['/assets/simplewebauthn-browser.js', '/assets/passkeys.js'] as const;

/** Where the script says what went wrong in the browser (a cancelled prompt); announced when filled. */
const status = html`<p class="alert" role="alert" data-passkey-status hidden></p>`;

/** The sign-in page's passkey form: a button, and the browser's autofill on the username field. */
export function passkeySignIn(input: { options: string; interaction: string; csrfToken: string }): SafeHtml {
  return html`<form method="post" action="/login/passkey" class="passkey" data-passkey="sign-in" data-autofill="true"
  data-options="${input.options}" hidden>
<input type="hidden" name="interaction" value="${input.interaction}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="response" value="">
<p class="separator">or</p>
<button type="submit" class="secondary">Sign in with a passkey</button>
${status}
</form>`;
}

/** Other steps the sign-in offers instead (their pages: /login/<method>?pending=…). */
const OTHER_STEPS: Record<string, string> = {
  totp: 'an authenticator app',
  'recovery-code': 'a recovery code',
  password: 'your password',
};

/** A passkey as a later step of a sign-in (after the password, or a step-up). */
export function passkeyStepPage(input: {
  pending: string;
  csrfToken: string;
  options: string;
  /** The other steps the sign-in offers here. */
  others: string[];
  error?: string;
}): string {
  const pending = encodeURIComponent(input.pending);
  return layout(
    'Use your passkey',
    html`<h1>Use your passkey</h1>
<p>To finish signing in, confirm it is you with one of your passkeys.</p>
${input.error ? html`<p class="alert" role="alert">${input.error}</p>` : ''}
<form method="post" action="/login/passkey" data-passkey="confirm" data-options="${input.options}" hidden>
<input type="hidden" name="pending" value="${input.pending}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="response" value="">
<button type="submit">Use a passkey</button>
${status}
</form>
<p class="muted" data-passkey-fallback>Using a passkey needs a browser with JavaScript and passkey support.</p>
${input.others.map(
  (method) =>
    html`<p><a href="/login/${method}?pending=${pending}">Use ${OTHER_STEPS[method] ?? method} instead</a></p>\n`,
)}`,
    PASSKEY_SCRIPTS,
  );
}

/** The account page's passkeys section: what the page needs besides the form token. */
export interface PasskeysSection {
  passkeys: PasskeyListing[];
  /**
   * The options of a new passkey's registration, as JSON; null when the user must sign in again first;
   * undefined when this server cannot have passkeys (its address is an IP address).
   */
  registration: string | null | undefined;
  /** What the last change said: done, or why not. */
  note?: { text: string; error: boolean };
}

function passkeyEntry(passkey: PasskeyListing, csrfToken: string): SafeHtml {
  const used = passkey.lastUsed ? `last used ${passkey.lastUsed}` : 'not used yet';
  const kind = passkey.synced ? 'synced across your devices' : 'kept on one device or security key';
  return html`<section class="grant passkey" aria-labelledby="passkey-${passkey.id}">
<h3 id="passkey-${passkey.id}">${passkey.name}</h3>
<p class="muted">Added ${passkey.created}, ${used}; ${kind}.</p>
<form method="post" action="/account/passkeys/rename">
<input type="hidden" name="csrf" value="${csrfToken}">
<input type="hidden" name="id" value="${passkey.id}">
<label for="rename-${passkey.id}">New name for ${passkey.name}</label>
<input type="text" id="rename-${passkey.id}" name="name" maxlength="64" required value="${passkey.name}">
<div class="actions">
<button type="submit" class="secondary">Rename</button>
</div>
</form>
<form method="post" action="/account/passkeys/remove">
<input type="hidden" name="csrf" value="${csrfToken}">
<input type="hidden" name="id" value="${passkey.id}">
<button type="submit" class="secondary">Remove ${passkey.name}</button>
</form>
</section>
`;
}

export function passkeysSection(input: PasskeysSection, csrfToken: string): SafeHtml {
  const { note } = input;
  return html`<h2 id="passkeys">Passkeys</h2>
<p class="muted">A passkey signs you in with your device's screen lock or a security key: nothing to type, and
nothing a look-alike site could use.</p>
${note ? html`<p ${note.error ? html`class="alert" role="alert"` : html`role="status"`}>${note.text}</p>` : ''}
${
  input.passkeys.length === 0
    ? html`<p>You have no passkeys yet.</p>`
    : input.passkeys.map((passkey) => passkeyEntry(passkey, csrfToken))
}
${
  input.registration === undefined
    ? html`<p class="muted">Passkeys need this service to be reached at a domain name, not an IP address.</p>`
    : input.registration !== null
      ? html`<form method="post" action="/account/passkeys" data-passkey="register" data-options="${input.registration}"
  hidden>
<input type="hidden" name="csrf" value="${csrfToken}">
<input type="hidden" name="response" value="">
<label for="passkey-name">Name of the new passkey (optional)</label>
<input type="text" id="passkey-name" name="name" maxlength="64" placeholder="e.g. Work laptop">
<button type="submit">Add a passkey</button>
${status}
</form>
<p class="muted" data-passkey-fallback>Adding a passkey needs a browser with JavaScript and passkey support.</p>`
      : html`<p>To add or remove a passkey, <a href="/account/login?reauth=1">sign in again</a>: changes to how you
sign in need a sign-in within the last 5 minutes.</p>`
}`;
}
