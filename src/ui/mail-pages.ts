// The pages of what mail makes possible (issue 34): asking for a password reset, choosing a new
// password from a reset or an invitation's link, confirming an address, signing up; and the sign-in
// page's links to them and the account page's address section. Every text is a message of the
// catalogues (src/i18n/messages, keys `mail.page.*`).
import { html, type SafeHtml } from './html.ts';
import { layout, type PageContext, say, type Text } from './layout.ts';

/** The sign-in page's links to what mail makes possible (none when mail is off). */
export function mailLinks(ui: PageContext, input: { forgot: boolean; signup: boolean }) {
  if (!input.forgot && !input.signup) return '';
  const forgot = input.forgot ? html`<a href="/reset/request">${ui.t.t('mail.page.forgotLink')}</a>` : '';
  const signup = input.signup ? html`<a href="/signup">${ui.t.t('mail.page.signupLink')}</a>` : '';
  return html`<p class="muted">${forgot}${input.forgot && input.signup ? ' · ' : ''}${signup}</p>`;
}

/**
 * A page of one form: its title as its heading, a line saying what it is for, what was wrong with the
 * last try, then `rest` (the form and what follows it). The passkey step's page is one too
 * (./passkeys.ts); its home would be ./layout.ts.
 */
export function formPage(
  ui: PageContext,
  page: { title: string; intro: SafeHtml | string; error?: Text | undefined },
  rest: SafeHtml,
  scripts: readonly string[] = [],
): string {
  return layout(
    ui,
    page.title,
    html`<h1>${page.title}</h1>
<p>${page.intro}</p>
${page.error ? html`<p class="alert" role="alert">${say(ui, page.error)}</p>` : ''}
${rest}`,
    scripts,
  );
}

export function forgotPage(ui: PageContext, input: { csrfToken: string; error?: Text }): string {
  const { t } = ui;
  return formPage(
    ui,
    { title: t.t('mail.page.forgot.title'), intro: t.t('mail.page.forgot.intro'), error: input.error },
    html`<form method="post" action="/reset/request">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<label for="identifier">${t.t('mail.page.forgot.identifier')}</label>
<input type="text" id="identifier" name="identifier" autocomplete="username" autocapitalize="none"
  spellcheck="false" required autofocus maxlength="320">
<button type="submit">${t.t('mail.page.forgot.submit')}</button>
</form>
<p class="muted"><a href="/account/login">${t.t('mail.page.back')}</a></p>`,
  );
}

/** A page that says one thing (its title and its text), with a link to sign in. */
export function notePage(ui: PageContext, page: { title: Text; body: Text }, signIn = true): string {
  const title = ui.t.t(page.title.key, page.title.values);
  return layout(
    ui,
    title,
    html`<h1>${title}</h1>
<p role="status">${say(ui, page.body)}</p>
${signIn ? html`<p><a href="/account/login">${ui.t.t('mail.page.signIn')}</a></p>` : ''}`,
  );
}

/** The form where a reset's or an invitation's follower chooses a password. */
export function choosePasswordPage(
  ui: PageContext,
  input: {
    kind: 'reset' | 'invite';
    action: string;
    /** Hidden fields that carry the link (its token) or the reset under way. */
    fields: Record<string, string>;
    csrfToken: string;
    username: string;
    error?: Text;
  },
): string {
  const { t } = ui;
  const reset = input.kind === 'reset';
  const title = reset ? t.t('mail.page.choose.resetTitle') : t.t('mail.page.choose.inviteTitle');
  const values = { username: input.username };
  const intro = reset ? t.html('mail.page.choose.resetIntro', values) : t.html('mail.page.choose.inviteIntro', values);
  return formPage(
    ui,
    { title, intro, error: input.error },
    html`<form method="post" action="${input.action}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
${Object.entries(input.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">\n`)}
<input type="text" name="username" value="${input.username}" autocomplete="username" hidden readonly>
<label for="password">${t.t('mail.page.choose.password')}</label>
<input type="password" id="password" name="password" autocomplete="new-password" required autofocus>
<label for="confirm">${t.t('mail.page.choose.confirm')}</label>
<input type="password" id="confirm" name="confirm" autocomplete="new-password" required>
<button type="submit">${t.t('mail.page.choose.submit')}</button>
</form>`,
  );
}

export function signupPage(
  ui: PageContext,
  input: { csrfToken: string; domains: readonly string[]; error?: Text; username?: string; email?: string },
): string {
  const { t } = ui;
  const domains = input.domains.join(', ');
  return layout(
    ui,
    t.t('mail.page.signup.title'),
    html`<h1>${t.t('mail.page.signup.title')}</h1>
${domains ? html`<p class="muted">${t.t('mail.page.signup.domain', { domains })}</p>` : ''}
${input.error ? html`<p class="alert" role="alert">${say(ui, input.error)}</p>` : ''}
<form method="post" action="/signup">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<label for="username">${t.t('mail.page.signup.username')}</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false"
  required autofocus maxlength="64" value="${input.username ?? ''}">
<label for="email">${t.t('mail.page.signup.email')}</label>
<input type="email" id="email" name="email" autocomplete="email" required maxlength="320" value="${input.email ?? ''}">
<label for="password">${t.t('mail.page.signup.password')}</label>
<input type="password" id="password" name="password" autocomplete="new-password" required>
<button type="submit">${t.t('mail.page.signup.submit')}</button>
</form>
<p class="muted"><a href="/account/login">${t.t('mail.page.back')}</a></p>`,
  );
}

/** The account page's email section: the address, whether it is confirmed, and the form to change it. */
export function emailSection(
  ui: PageContext,
  input: { email: string; verified: boolean; csrfToken: string; note?: Text | undefined; error?: Text | undefined },
) {
  const { t } = ui;
  const state = input.verified ? t.t('mail.page.email.verified') : t.t('mail.page.email.unverified');
  return html`<section aria-labelledby="email-heading" id="email">
<h2 id="email-heading">${t.t('mail.page.email.heading')}</h2>
<p>${input.email} (${state})</p>
${input.note ? html`<p role="status">${say(ui, input.note)}</p>` : ''}
${input.error ? html`<p class="alert" role="alert">${say(ui, input.error)}</p>` : ''}
<form method="post" action="/account/email">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<label for="new-email">${t.t('mail.page.email.label')}</label>
<input type="email" id="new-email" name="email" autocomplete="email" required maxlength="320" value="${
    input.verified ? '' : input.email
  }">
<button type="submit">${input.verified ? t.t('mail.page.email.submit') : t.t('mail.page.email.resend')}</button>
</form>
</section>`;
}
