// The device verification page (RFC 8628 §3.3): the code a device shows, typed (a GET form: looking a
// code up decides nothing), then what the device's client asks, as on the consent page, with the code
// to compare with the device's screen (§5.4: a code someone else sent is not approved unseen), and
// Allow or Deny (a POST with the form token); then what was decided. Works without JavaScript.
import { html } from './html.ts';
import { layout, type PageContext, say, type Text } from './layout.ts';
import { allowOrDeny, type ClientRequest, clientRequestSummary, clientRequestTitle } from './pages.ts';

/** The form to type the code in: empty, or with what was typed and why it was not taken. */
export function deviceCodePage(ui: PageContext, input: { username: string; typed?: string; error?: Text }): string {
  const { t } = ui;
  const invalid = input.error !== undefined;
  return layout(
    ui,
    t.t('device.title'),
    html`<h1>${t.t('device.title')}</h1>
<p class="muted">${t.html('consent.signedInAs', { username: input.username })}</p>
${input.error ? html`<p class="alert" id="code-error" role="alert">${say(ui, input.error)}</p>` : ''}
<form method="get" action="/device">
<label for="user_code">${t.t('device.code')}</label>
<p class="muted" id="code-hint">${t.t('device.codeHint')}</p>
<input type="text" id="user_code" name="user_code" autocomplete="one-time-code" autocapitalize="characters"
  spellcheck="false" required autofocus maxlength="16" value="${input.typed ?? ''}" aria-describedby="code-hint${
    invalid ? ' code-error' : ''
  }"${invalid ? html` aria-invalid="true"` : ''}>
<button type="submit">${t.t('device.continue')}</button>
</form>`,
  );
}

/** What the device's client asks, the code to compare, and Allow or Deny. */
export function deviceConfirmPage(
  ui: PageContext,
  input: ClientRequest & { userCode: string; csrfToken: string },
): string {
  const { t } = ui;
  return layout(
    ui,
    clientRequestTitle(ui, input),
    html`${clientRequestSummary(ui, input)}
<p class="alert" role="note">${t.html('device.compare', { code: input.userCode })}</p>
<form method="post" action="/device">
<input type="hidden" name="user_code" value="${input.userCode}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
${allowOrDeny(ui)}
</form>`,
  );
}

/** After the answer: the device may go on (or was refused); nothing more to do here. */
export function deviceDonePage(ui: PageContext, input: { approved: boolean; clientName: string }): string {
  const { t } = ui;
  const title = t.t(input.approved ? 'device.approved.title' : 'device.denied.title');
  const says = input.approved ? 'device.approved.says' : 'device.denied.says';
  return layout(
    ui,
    title,
    html`<h1>${title}</h1>
<p role="status">${t.html(says, { client: input.clientName })}</p>`,
  );
}
