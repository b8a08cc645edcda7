// The passkey parts of the pages: the sign-in page's button (and its username field's autofill), the
// page of a passkey as a later step, and the account page's passkeys section. Each WebAuthn call is
// made by /assets/passkeys.js from a form marked `data-passkey`, whose options come in `data-options`;
// such a form is `hidden` until the script finds a browser that can use passkeys, so without
// JavaScript it is simply not there and the rest of the page works as before.
import type { PasskeyListing } from '../authn/passkeys/enrolment.ts';
import { html, type SafeHtml } from './html.ts';
import type { MessageKey } from '../i18n/index.ts';
import { type PageContext, postButton, say, type Text } from './layout.ts';
import { formPage } from './mail-pages.ts';

/** The scripts of a page with passkeys: @simplewebauthn/browser's bundle, then ours (src/ui/assets/passkeys.js). */
export const PASSKEY_SCRIPTS = ['/assets/simplewebauthn-browser.js', '/assets/passkeys.js'] as const;

/**
 * Where the script says what went wrong in the browser (a cancelled prompt); announced when filled.
 * Its texts, in the page's language, wait in its data attributes.
 */
function status(ui: PageContext): SafeHtml {
  const { t } = ui;
  return html`<p class="alert" role="alert" data-passkey-status hidden data-closed="${t.t('passkey.browser.closed')}"
  data-exists="${t.t('passkey.browser.exists')}" data-refused="${t.t('passkey.browser.refused')}"
  data-failed="${t.t('passkey.browser.failed')}"></p>`;
}

/** The sign-in page's passkey form: a button, and the browser's autofill on the username field. */
export function passkeySignIn(
  ui: PageContext,
  input: { options: string; interaction: string; csrfToken: string },
): SafeHtml {
  return html`<form method="post" action="/login/passkey" class="passkey" data-passkey="sign-in" data-autofill="true"
  data-options="${input.options}" hidden>
<input type="hidden" name="interaction" value="${input.interaction}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="response" value="">
<p class="separator">${ui.t.t('login.or')}</p>
<button type="submit" class="secondary">${ui.t.t('passkey.signIn')}</button>
${status(ui)}
</form>`;
}

/** Other steps the sign-in offers instead (their pages: /login/<method>?pending=…). */
const OTHER_STEPS: Record<string, MessageKey> = {
  totp: 'passkey.step.useTotp',
  'recovery-code': 'passkey.step.useRecoveryCode',
  password: 'passkey.step.usePassword',
};

/** A passkey as a later step of a sign-in (after the password, or a step-up). */
export function passkeyStepPage(
  ui: PageContext,
  input: {
    pending: string;
    csrfToken: string;
    options: string;
    /** The other steps the sign-in offers here. */
    others: string[];
    error?: Text;
  },
): string {
  const { t } = ui;
  const pending = encodeURIComponent(input.pending);
  return formPage(
    ui,
    { title: t.t('passkey.step.title'), intro: t.t('passkey.step.intro'), error: input.error },
    html`<form method="post" action="/login/passkey" data-passkey="confirm" data-options="${input.options}" hidden>
<input type="hidden" name="pending" value="${input.pending}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="response" value="">
<button type="submit">${t.t('passkey.step.use')}</button>
${status(ui)}
</form>
<p class="muted" data-passkey-fallback>${t.t('passkey.step.needsScript')}</p>
${input.others.map((method) => {
  const key = OTHER_STEPS[method];
  return key ? html`<p><a href="/login/${method}?pending=${pending}">${t.t(key)}</a></p>\n` : '';
})}`,
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
  note?: { text: Text; error: boolean };
}

function passkeyEntry(ui: PageContext, passkey: PasskeyListing, csrfToken: string): SafeHtml {
  const { t } = ui;
  const about = {
    added: t.date(passkey.created),
    used: passkey.lastUsed === null ? 'never' : 'used',
    lastUsed: passkey.lastUsed === null ? '' : t.dateTime(passkey.lastUsed),
    kind: passkey.synced ? 'synced' : 'device',
  };
  // Its counter went back (src/authn/passkeys/suspension.ts): said where the passkey is, until removed.
  const suspended =
    passkey.suspended === null
      ? ''
      : html`<p class="alert" role="alert">${t.t('passkeys.suspended', { at: t.date(passkey.suspended) })}</p>`;
  return html`<section class="grant passkey" aria-labelledby="passkey-${passkey.id}">
<h3 id="passkey-${passkey.id}">${passkey.name}</h3>
<p class="muted">${t.t('passkeys.about', about)}</p>
${suspended}
<form method="post" action="/account/passkeys/rename">
<input type="hidden" name="csrf" value="${csrfToken}">
<input type="hidden" name="id" value="${passkey.id}">
<label for="rename-${passkey.id}">${t.t('passkeys.newName', { name: passkey.name })}</label>
<input type="text" id="rename-${passkey.id}" name="name" maxlength="64" required value="${passkey.name}">
<div class="actions">
<button type="submit" class="secondary">${t.t('passkeys.rename')}</button>
</div>
</form>
${postButton('/account/passkeys/remove', csrfToken, ['id', passkey.id], t.t('passkeys.remove', { name: passkey.name }))}
</section>
`;
}

export function passkeysSection(ui: PageContext, input: PasskeysSection, csrfToken: string): SafeHtml {
  const { t } = ui;
  const { note } = input;
  return html`<h2 id="passkeys">${t.t('passkeys.title')}</h2>
<p class="muted">${t.t('passkeys.intro')}</p>
${note ? html`<p ${note.error ? html`class="alert" role="alert"` : html`role="status"`}>${say(ui, note.text)}</p>` : ''}
${
  input.passkeys.length === 0
    ? html`<p>${t.t('passkeys.none')}</p>`
    : input.passkeys.map((passkey) => passkeyEntry(ui, passkey, csrfToken))
}
${
  input.registration === undefined
    ? html`<p class="muted">${t.t('passkeys.needsDomain')}</p>`
    : input.registration !== null
      ? html`<form method="post" action="/account/passkeys" data-passkey="register" data-options="${input.registration}"
  hidden>
<input type="hidden" name="csrf" value="${csrfToken}">
<input type="hidden" name="response" value="">
<label for="passkey-name">${t.t('passkeys.name')}</label>
<input type="text" id="passkey-name" name="name" maxlength="64" placeholder="${t.t('passkeys.namePlaceholder')}">
<button type="submit">${t.t('passkeys.add')}</button>
${status(ui)}
</form>
<p class="muted" data-passkey-fallback>${t.t('passkeys.addNeedsScript')}</p>`
      : html`<p>${t.html('passkeys.reauth', {
          link: (content) => html`<a href="/account/login?reauth=1">${content}</a>`,
          minutes: 5,
        })}</p>`
}`;
}
