// The pages and account-page sections of second factors besides passkeys: an authenticator app's code
// as a later step of a sign-in, its enrolment (during a sign-in that needs one, and on the account
// page), a recovery code as a step, and the recovery codes shown once. Plain forms: no script. Every
// text a person reads is in STRINGS, so that it can move to a message catalogue as one block.
import type { RecoveryCodeSummary } from '../store/second-factors.ts';
import { html, SafeHtml } from './html.ts';
import { layout } from './pages.ts';

export const STRINGS = {
  codeTitle: 'Enter your authenticator code',
  codeIntro: 'Open the authenticator app on your phone and type the 6-digit code it shows for this site.',
  codeLabel: 'Authenticator code',
  verify: 'Verify',
  wrongCode: 'That code is not right, or it has been used already. Wait for the next one and try again.',
  enrolTitle: 'Set up an authenticator app',
  enrolRequired: 'This service asks for a second step at sign-in. Set up an authenticator app to go on.',
  enrolIntro:
    'Scan the QR code with an authenticator app (Google Authenticator, Microsoft Authenticator, Aegis, 1Password, …).',
  qrLabel: 'QR code to scan with your authenticator app',
  openLink: 'On this phone? Open it in your authenticator app',
  typeKey: 'Or type this key into the app (time-based, 6 digits):',
  enrolCodeLabel: 'Code from the app, to confirm',
  enrolButton: 'Confirm and turn on',
  enrolWrongCode: 'That code does not match. Check the key in your app and the time on your phone, then try again.',
  enrolExpired: 'That set-up took too long. Here is a new key: add it to your app instead.',
  recoveryTitle: 'Use a recovery code',
  recoveryIntro: 'Type one of the recovery codes you saved when you set up your second factor. Each works once.',
  recoveryLabel: 'Recovery code',
  recoveryWrong: 'That recovery code is not right, or it has been used already.',
  codesTitle: 'Save your recovery codes',
  codesIntro:
    'If you lose your phone or passkey, each of these codes signs you in once instead. ' +
    'Keep them somewhere safe: they are shown only now.',
  codesContinue: 'I have saved them: continue',
  codesBack: 'I have saved them: back to your account',
  backToAccount: 'Back to your account',
  useInstead: (what: string) => `Use ${what} instead`,
  stepNames: { totp: 'an authenticator app', 'recovery-code': 'a recovery code', passkey: 'a passkey' } as Record<
    string,
    string
  >,
  tooMany: (seconds: string) => `Too many wrong codes. Try again in ${seconds}.`,
  tooManyLocked: (seconds: string) => `Too many wrong codes: signing in is locked. Try again in ${seconds}.`,
  appHeading: 'Authenticator app',
  appIntro: 'An authenticator app on your phone gives a new 6-digit code every 30 seconds, asked after your password.',
  appOn: (since: string, used: string | null) =>
    `Turned on ${since}; ${used ? `last used ${used}` : 'not used to sign in yet'}.`,
  appRemove: 'Turn off the authenticator app',
  appAdded: 'Your authenticator app is on. From now on it is asked for after your password.',
  appRemoved: 'The authenticator app is off; your other sessions have ended.',
  appAlready: 'You have an authenticator app already.',
  reauth: 'To change how you sign in, sign in again first: changes need a sign-in within the last 5 minutes.',
  reauthLink: 'Sign in again',
  codesHeading: 'Recovery codes',
  codesNone: 'You have no recovery codes.',
  codesLeft: (unused: number, used: number) =>
    `${unused} of ${unused + used} recovery codes left${used > 0 ? `; ${used} used` : ''}.`,
  codesLastUsed: (at: string) => `A recovery code was last used to sign in ${at}.`,
  codesRenew: 'Make new recovery codes',
  codesRenewNote: 'New codes replace the old ones, which stop working.',
  codesNeedFactor: 'Recovery codes come with an authenticator app or a passkey.',
} as const;

/** Links to the other steps the sign-in offers here. */
function others(pending: string, methods: readonly string[]): SafeHtml[] {
  const encoded = encodeURIComponent(pending);
  return methods.map(
    (m) => html`<p><a href="/login/${m}?pending=${encoded}">${STRINGS.useInstead(STRINGS.stepNames[m] ?? m)}</a></p>\n`,
  );
}

const alert = (error: string | undefined) => (error ? html`<p class="alert" role="alert">${error}</p>` : '');

/** The code field: numeric keypad on phones, the one-time code the browser or phone may offer to fill. */
function codeField(id: string, label: string): SafeHtml {
  return html`<label for="${id}">${label}</label>
<input type="text" id="${id}" name="code" inputmode="numeric" pattern="[0-9 ]{6,7}" maxlength="7"
  autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required autofocus>`;
}

/** An authenticator code as a later step of a sign-in. */
export function totpStepPage(input: { pending: string; csrfToken: string; others: string[]; error?: string }): string {
  return layout(
    STRINGS.codeTitle,
    html`<h1>${STRINGS.codeTitle}</h1>
<p>${STRINGS.codeIntro}</p>
${alert(input.error)}
<form method="post" action="/login/totp">
<input type="hidden" name="pending" value="${input.pending}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
${codeField('code', STRINGS.codeLabel)}
<button type="submit">${STRINGS.verify}</button>
</form>
${others(input.pending, input.others)}`,
  );
}

/** A new secret, three ways, and the confirmation form; posted to `action` with the hidden fields given. */
function enrolForm(input: {
  action: string;
  hidden: Record<string, string>;
  offer: { secret: string; uri: string; qrSvg: string; enrolment: string };
}): SafeHtml {
  const { offer } = input;
  // The QR code is an SVG document the server made from the URI (the qrcode package): no input of anyone's.
  const qr = new SafeHtml(offer.qrSvg.replace('<svg ', `<svg role="img" aria-label="${STRINGS.qrLabel}" `));
  const key = offer.secret.replace(/(.{4})(?!$)/g, '$1 ');
  return html`<p>${STRINGS.enrolIntro}</p>
<div class="qr">${qr}</div>
<p><a href="${offer.uri}">${STRINGS.openLink}</a></p>
<p>${STRINGS.typeKey} <code class="key">${key}</code></p>
<form method="post" action="${input.action}">
${Object.entries(input.hidden).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">\n`)}
<input type="hidden" name="enrolment" value="${offer.enrolment}">
${codeField('enrol-code', STRINGS.enrolCodeLabel)}
<button type="submit">${STRINGS.enrolButton}</button>
</form>`;
}

/**
 * Enrolment as the step of a sign-in that needs a second factor (TESSERA_MFA=required, a client, a
 * scope), with `pending`; without, the account page's after a wrong code (the same secret again).
 */
export function totpEnrolPage(input: {
  pending?: string;
  csrfToken: string;
  offer: { secret: string; uri: string; qrSvg: string; enrolment: string };
  error?: string;
}): string {
  const hidden: Record<string, string> =
    input.pending === undefined ? { csrf: input.csrfToken } : { pending: input.pending, csrf: input.csrfToken };
  return layout(
    STRINGS.enrolTitle,
    html`<h1>${STRINGS.enrolTitle}</h1>
${input.pending === undefined ? '' : html`<p>${STRINGS.enrolRequired}</p>`}
${alert(input.error)}
${enrolForm({ action: input.pending === undefined ? '/account/totp' : '/login/totp', hidden, offer: input.offer })}
${input.pending === undefined ? html`<p><a href="/account#second-factors">${STRINGS.backToAccount}</a></p>` : ''}`,
  );
}

/** A recovery code as a later step of a sign-in. */
export function recoveryCodeStepPage(input: {
  pending: string;
  csrfToken: string;
  others: string[];
  error?: string;
}): string {
  return layout(
    STRINGS.recoveryTitle,
    html`<h1>${STRINGS.recoveryTitle}</h1>
<p>${STRINGS.recoveryIntro}</p>
${alert(input.error)}
<form method="post" action="/login/recovery-code">
<input type="hidden" name="pending" value="${input.pending}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<label for="code">${STRINGS.recoveryLabel}</label>
<input type="text" id="code" name="code" autocomplete="one-time-code" autocapitalize="none" spellcheck="false"
  maxlength="24" required autofocus>
<button type="submit">${STRINGS.verify}</button>
</form>
${others(input.pending, input.others)}`,
  );
}

/** The recovery codes, shown once; then on with the sign-in (a held one) or back to the account page. */
export function recoveryCodesPage(input: {
  codes: string[];
  csrfToken: string;
  then: { pending: string } | { account: true };
}): string {
  const next =
    'pending' in input.then
      ? html`<form method="post" action="/login/continue">
<input type="hidden" name="pending" value="${input.then.pending}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<button type="submit">${STRINGS.codesContinue}</button>
</form>`
      : html`<p><a href="/account#second-factors">${STRINGS.codesBack}</a></p>`;
  return layout(
    STRINGS.codesTitle,
    html`<h1>${STRINGS.codesTitle}</h1>
<p>${STRINGS.codesIntro}</p>
<ul class="codes" aria-label="${STRINGS.codesHeading}">
${input.codes.map((code) => html`<li><code>${code}</code></li>\n`)}</ul>
${next}`,
  );
}

/** The account page's section: what the page needs besides the form token. */
export interface SecondFactorsSection {
  /** The authenticator app, when the user has one: since and last use (YYYY-MM-DD HH:MM UTC). */
  app: { since: string; lastUsed: string | null } | null;
  /** A new secret to add, when the user may add one now; null when they must sign in again first. */
  offer: { secret: string; uri: string; qrSvg: string; enrolment: string } | null;
  recoveryCodes: RecoveryCodeSummary & { lastUsed: string | null };
  /** Whether the user has a second factor the codes can stand in for (an app or a passkey). */
  canHaveCodes: boolean;
  /** What the last change said. */
  note?: { text: string; error: boolean };
}

/** Notes the account page shows after a change (`?mfa=…`). */
export const SECOND_FACTOR_NOTES: Record<string, { text: string; error: boolean }> = {
  added: { text: STRINGS.appAdded, error: false },
  removed: { text: STRINGS.appRemoved, error: false },
  already: { text: STRINGS.appAlready, error: true },
  'wrong-code': { text: STRINGS.enrolWrongCode, error: true },
  expired: { text: STRINGS.enrolExpired, error: true },
};

const codesLeft = (codes: RecoveryCodeSummary) => html`<p>${STRINGS.codesLeft(codes.unused, codes.used)}</p>`;

export function secondFactorsSection(input: SecondFactorsSection, csrfToken: string): SafeHtml {
  const { note, app, recoveryCodes: codes } = input;
  const csrf = html`<input type="hidden" name="csrf" value="${csrfToken}">`;
  const reauth = html`<p>${STRINGS.reauth} <a href="/account/login?reauth=1">${STRINGS.reauthLink}</a></p>`;
  return html`<h2 id="second-factors">${STRINGS.appHeading}</h2>
<p class="muted">${STRINGS.appIntro}</p>
${note ? html`<p ${note.error ? html`class="alert" role="alert"` : html`role="status"`}>${note.text}</p>` : ''}
${
  app
    ? html`<p>${STRINGS.appOn(app.since, app.lastUsed)}</p>
<form method="post" action="/account/totp/remove">${csrf}
<button type="submit" class="secondary">${STRINGS.appRemove}</button>
</form>`
    : input.offer
      ? enrolForm({ action: '/account/totp', hidden: { csrf: csrfToken }, offer: input.offer })
      : reauth
}
<h2 id="recovery-codes">${STRINGS.codesHeading}</h2>
${codes.unused + codes.used === 0 ? html`<p>${STRINGS.codesNone}</p>` : codesLeft(codes)}
${codes.lastUsed ? html`<p role="note">${STRINGS.codesLastUsed(codes.lastUsed)}</p>` : ''}
${
  input.canHaveCodes
    ? html`<form method="post" action="/account/recovery-codes">${csrf}
<p class="muted">${STRINGS.codesRenewNote}</p>
<button type="submit" class="secondary">${STRINGS.codesRenew}</button>
</form>`
    : html`<p class="muted">${STRINGS.codesNeedFactor}</p>`
}`;
}
