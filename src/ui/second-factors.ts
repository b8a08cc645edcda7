// The pages and account-page sections of second factors besides passkeys: an authenticator app's code
// as a later step of a sign-in, its enrolment (during a sign-in that needs one, and on the account
// page), a recovery code as a step, and the recovery codes shown once. Plain forms: no script. Every
// text comes from the message catalogues (`mfa.*`, src/i18n/messages/).
import type { MessageKey } from '../i18n/index.ts';
import type { RecoveryCodeSummary } from '../store/second-factors.ts';
import { html, SafeHtml } from './html.ts';
import { layout, type PageContext, say, type Text } from './layout.ts';

/** A new secret as the enrolment form shows it (src/authn/totp/enrolment.ts). */
export interface TotpOfferView {
  secret: string;
  uri: string;
  /** The QR code of `uri`: an SVG document the server made (the qrcode package), no input of anyone's. */
  qrSvg: string;
  enrolment: string;
}

/** Other steps a sign-in offers instead (their pages: /login/<method>?pending=…). */
const OTHER_STEPS: Record<string, MessageKey> = {
  passkey: 'mfa.step.usePasskey',
  totp: 'mfa.step.useTotp',
  'recovery-code': 'mfa.step.useRecoveryCode',
};

function others(ui: PageContext, pending: string, methods: readonly string[]): Array<SafeHtml | ''> {
  const encoded = encodeURIComponent(pending);
  return methods.map((method) => {
    const key = OTHER_STEPS[method];
    return key ? html`<p><a href="/login/${method}?pending=${encoded}">${ui.t.t(key)}</a></p>\n` : '';
  });
}

const alert = (ui: PageContext, error: Text | undefined) =>
  error ? html`<p class="alert" role="alert">${say(ui, error)}</p>` : '';

/** The code field: a numeric keypad on phones, and the one-time code a phone or browser may offer to fill. */
function codeField(id: string, label: string): SafeHtml {
  return html`<label for="${id}">${label}</label>
<input type="text" id="${id}" name="code" inputmode="numeric" pattern="[0-9 ]{6,7}" maxlength="7"
  autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required autofocus>`;
}

type StepInput = { pending: string; csrfToken: string; others: string[]; error?: Text };

/** A code typed as a later step of a sign-in: posted to `action` with the held sign-in, other steps below. */
function codeStepPage(
  ui: PageContext,
  step: { title: MessageKey; intro: MessageKey; action: string; field: SafeHtml },
  input: StepInput,
): string {
  const { t } = ui;
  return layout(
    ui,
    t.t(step.title),
    html`<h1>${t.t(step.title)}</h1>
<p>${t.t(step.intro)}</p>
${alert(ui, input.error)}
<form method="post" action="${step.action}">
<input type="hidden" name="pending" value="${input.pending}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
${step.field}
<button type="submit">${t.t('mfa.verify')}</button>
</form>
${others(ui, input.pending, input.others)}`,
  );
}

/** An authenticator code as a later step of a sign-in. */
export function totpStepPage(ui: PageContext, input: StepInput): string {
  const field = codeField('code', ui.t.t('mfa.code.label'));
  return codeStepPage(ui, { title: 'mfa.code.title', intro: 'mfa.code.intro', action: '/login/totp', field }, input);
}

/** A new secret three ways, and the confirmation form, posted to `action` with the hidden fields given. */
function enrolForm(
  ui: PageContext,
  input: { action: string; hidden: Record<string, string>; offer: TotpOfferView },
): SafeHtml {
  const { t } = ui;
  const { offer } = input;
  const label = html`${t.t('mfa.enrol.qr')}`.value;
  const qr = new SafeHtml(offer.qrSvg.replace('<svg ', `<svg role="img" aria-label="${label}" `));
  const key = offer.secret.replace(/(.{4})(?!$)/g, '$1 ');
  return html`<p>${t.t('mfa.enrol.intro')}</p>
<div class="qr">${qr}</div>
<p><a href="${offer.uri}">${t.t('mfa.enrol.openLink')}</a></p>
<p>${t.t('mfa.enrol.typeKey')} <code class="key">${key}</code></p>
<form method="post" action="${input.action}">
${Object.entries(input.hidden).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">\n`)}
<input type="hidden" name="enrolment" value="${offer.enrolment}">
${codeField('enrol-code', t.t('mfa.enrol.codeLabel'))}
<button type="submit">${t.t('mfa.enrol.submit')}</button>
</form>`;
}

/**
 * Enrolment as the step of a sign-in that needs a second factor (TESSERA_MFA=required, a client, a
 * scope), with `pending`; without, the account page's after a wrong code (the same secret again).
 */
export function totpEnrolPage(
  ui: PageContext,
  input: { pending?: string; csrfToken: string; offer: TotpOfferView; error?: Text },
): string {
  const { t } = ui;
  const during = input.pending !== undefined;
  const hidden: Record<string, string> = during
    ? { pending: input.pending!, csrf: input.csrfToken }
    : { csrf: input.csrfToken };
  return layout(
    ui,
    t.t('mfa.enrol.title'),
    html`<h1>${t.t('mfa.enrol.title')}</h1>
${during ? html`<p>${t.t('mfa.enrol.required')}</p>` : ''}
${alert(ui, input.error)}
${enrolForm(ui, { action: during ? '/login/totp' : '/account/totp', hidden, offer: input.offer })}
${during ? '' : html`<p><a href="/account#second-factors">${t.t('mfa.enrol.back')}</a></p>`}`,
  );
}

/** A recovery code as a later step of a sign-in. */
export function recoveryCodeStepPage(ui: PageContext, input: StepInput): string {
  const field = html`<label for="code">${ui.t.t('mfa.recovery.label')}</label>
<input type="text" id="code" name="code" autocomplete="one-time-code" autocapitalize="none" spellcheck="false"
  maxlength="24" required autofocus>`;
  const step = { title: 'mfa.recovery.title', intro: 'mfa.recovery.intro', action: '/login/recovery-code' } as const;
  return codeStepPage(ui, { ...step, field }, input);
}

/** The recovery codes, shown once; then on with the sign-in (a held one) or back to the account page. */
export function recoveryCodesPage(
  ui: PageContext,
  input: { codes: string[]; csrfToken: string; then: { pending: string } | { account: true } },
): string {
  const { t } = ui;
  const next =
    'pending' in input.then
      ? html`<form method="post" action="/login/continue">
<input type="hidden" name="pending" value="${input.then.pending}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<button type="submit">${t.t('mfa.codes.continue')}</button>
</form>`
      : html`<p><a href="/account#second-factors">${t.t('mfa.codes.back')}</a></p>`;
  return layout(
    ui,
    t.t('mfa.codes.title'),
    html`<h1>${t.t('mfa.codes.title')}</h1>
<p>${t.t('mfa.codes.intro')}</p>
<ul class="codes" aria-label="${t.t('mfa.codes.heading')}">
${input.codes.map((code) => html`<li><code>${code}</code></li>\n`)}</ul>
${next}`,
  );
}

/** The account page's section: what the page needs besides the form token. */
export interface SecondFactorsSection {
  /** The authenticator app, when the user has one: when added and last used, epoch seconds. */
  app: { since: number; lastUsed: number | null } | null;
  /** A new secret to add, when the user may add one now; null when they must sign in again first. */
  offer: TotpOfferView | null;
  recoveryCodes: RecoveryCodeSummary;
  /** Whether the user has a second factor the codes can stand in for (an app or a passkey). */
  canHaveCodes: boolean;
  /** What the last change said. */
  note?: { text: Text; error: boolean };
}

/** What the account page says after a change (`?mfa=…`). */
export const SECOND_FACTOR_NOTES: Record<string, { text: Text; error: boolean }> = {
  added: { text: { key: 'mfa.note.added' }, error: false },
  removed: { text: { key: 'mfa.note.removed' }, error: false },
  already: { text: { key: 'mfa.note.already' }, error: true },
  'wrong-code': { text: { key: 'mfa.enrol.wrong' }, error: true },
  expired: { text: { key: 'mfa.enrol.expired' }, error: true },
};

function appState(ui: PageContext, app: { since: number; lastUsed: number | null }): string {
  const { t } = ui;
  const used = app.lastUsed === null ? 'never' : 'yes';
  const lastUsed = app.lastUsed === null ? '' : t.dateTime(app.lastUsed);
  return t.t('mfa.app.on', { since: t.dateTime(app.since), used, lastUsed });
}

function codesState(ui: PageContext, codes: RecoveryCodeSummary): SafeHtml {
  const { t } = ui;
  if (codes.unused + codes.used === 0) return html`<p>${t.t('mfa.codes.none')}</p>`;
  const left = t.t('mfa.codes.left', { unused: codes.unused, total: codes.unused + codes.used, used: codes.used });
  const last = codes.lastUsedAt === null ? '' : t.t('mfa.codes.lastUsed', { at: t.dateTime(codes.lastUsedAt) });
  return html`<p>${left}</p>
${last ? html`<p role="note">${last}</p>` : ''}`;
}

export function secondFactorsSection(ui: PageContext, input: SecondFactorsSection, csrfToken: string): SafeHtml {
  const { t } = ui;
  const { note, app } = input;
  const csrf = html`<input type="hidden" name="csrf" value="${csrfToken}">`;
  const reauth = html`<p>${t.html('mfa.reauth', {
    link: (content) => html`<a href="/account/login?reauth=1">${content}</a>`,
    minutes: 5,
  })}</p>`;
  return html`<h2 id="second-factors">${t.t('mfa.app.title')}</h2>
<p class="muted">${t.t('mfa.app.intro')}</p>
${note ? html`<p ${note.error ? html`class="alert" role="alert"` : html`role="status"`}>${say(ui, note.text)}</p>` : ''}
${
  app
    ? html`<p>${appState(ui, app)}</p>
<form method="post" action="/account/totp/remove">${csrf}
<button type="submit" class="secondary">${t.t('mfa.app.remove')}</button>
</form>`
    : input.offer
      ? enrolForm(ui, { action: '/account/totp', hidden: { csrf: csrfToken }, offer: input.offer })
      : reauth
}
<h2 id="recovery-codes">${t.t('mfa.codes.heading')}</h2>
${codesState(ui, input.recoveryCodes)}
${
  input.canHaveCodes
    ? html`<form method="post" action="/account/recovery-codes">${csrf}
<p class="muted">${t.t('mfa.codes.renewNote')}</p>
<button type="submit" class="secondary">${t.t('mfa.codes.renew')}</button>
</form>`
    : html`<p class="muted">${t.t('mfa.codes.needFactor')}</p>`
}`;
}
