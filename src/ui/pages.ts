// The sign-in, consent, error and sign-out pages: complete documents in the reader's language,
// escaped by default, usable without JavaScript, every input labelled. The account page: ./account.ts.
import type { ClientVetting } from '../oauth/registration/trust.ts';
import { html, type SafeHtml } from './html.ts';
import { layout, type PageContext, say, type Text } from './layout.ts';
import { PASSKEY_SCRIPTS, passkeySignIn } from './passkeys.ts';
import { describeScope, type ScopeLine } from './scopes.ts';
import { providerButtons, type ProviderButton } from './upstream.ts';
import { mailLinks } from './mail-pages.ts';

/** What a failed sign-in says, whichever of the username and password was wrong. */
export const LOGIN_FAILED: Text = { key: 'login.failed' };

export function loginPage(
  ui: PageContext,
  input: {
    interaction: string;
    csrfToken: string;
    /** The client's name; null on the account's own sign-in. */
    clientName: string | null;
    error?: Text;
    /** Said above the form, not as an error (e.g. why the user signs in again). */
    note?: Text;
    /** What the sign-in is for, when neither a client nor the account (the admin console). */
    lead?: Text;
    username?: string;
    action?: string;
    /** Who vouches for the client: the same notice as the consent page's. */
    vetting?: ClientVetting;
    /** The options of a sign-in with a passkey (its button and the username field's autofill), as JSON. */
    passkeyOptions?: string;
    /** Upstream providers to sign in with (src/ui/upstream.ts), a button each. */
    providers?: readonly ProviderButton[];
    /** "Forgot your password?" and "Create an account" (./mail-pages.ts): only when mail makes them work. */
    mail?: { forgot: boolean; signup: boolean };
  },
): string {
  const { t } = ui;
  const vetting = input.vetting ?? { kind: 'operator' };
  const passkey = input.passkeyOptions !== undefined;
  const invalid = input.error !== undefined;
  const hidden = { interaction: input.interaction, csrfToken: input.csrfToken };
  return layout(
    ui,
    t.t('login.title'),
    html`<h1>${t.t('login.title')}</h1>
<p class="client">${
      input.clientName === null
        ? input.lead
          ? say(ui, input.lead)
          : t.html('login.toAccount')
        : t.html('login.toClient', { client: titleOf(input.clientName, vetting) })
    }</p>
${input.clientName === null ? '' : vettingNotice(ui, input.clientName, vetting)}
${input.note ? html`<p role="status">${say(ui, input.note)}</p>` : ''}
${input.error ? html`<p class="alert" id="login-error" role="alert">${say(ui, input.error)}</p>` : ''}
<form method="post" action="${input.action ?? '/login'}">
<input type="hidden" name="interaction" value="${input.interaction}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<label for="username">${t.t('login.username')}</label>
<input type="text" id="username" name="username" autocomplete="${passkey ? 'username webauthn' : 'username'}"
  autocapitalize="none" spellcheck="false" required autofocus value="${input.username ?? ''}"${
    invalid ? html` aria-invalid="true" aria-describedby="login-error"` : ''
  }>
<label for="password">${t.t('login.password')}</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">${t.t('login.submit')}</button>
</form>
${input.mail ? mailLinks(ui, input.mail) : ''}
${
  input.passkeyOptions !== undefined
    ? passkeySignIn(ui, { options: input.passkeyOptions, interaction: input.interaction, csrfToken: input.csrfToken })
    : ''
}
${providerButtons(ui, { ...hidden, providers: input.providers ?? [] })}`,
    passkey ? PASSKEY_SCRIPTS : [],
  );
}

/**
 * A client known by a metadata document is named by its host: its name is the document's claim alone.
 */
function titleOf(clientName: string, vetting: ClientVetting): string {
  return vetting.kind === 'document' ? vetting.host : clientName;
}

/**
 * What the sign-in, consent and sign-out pages say of a client nobody reviewed
 * (src/oauth/registration/trust.ts), and where the user will return; nothing for the operator's clients.
 */
export function vettingNotice(ui: PageContext, clientName: string, vetting: ClientVetting): SafeHtml | '' {
  const { t } = ui;
  const returning = vetting.kind !== 'operator' && vetting.returnHost !== null ? vetting.returnHost : null;
  const next = returning ? html` ${t.html('vetting.returnTo', { host: returning })}` : '';
  if (vetting.kind === 'document') {
    const says = t.html('vetting.document', { host: vetting.host, name: clientName });
    return html`<p class="alert vetting" role="note">${says}${next}</p>`;
  }
  if (vetting.kind === 'dynamic') {
    return html`<p class="alert vetting" role="note">${t.html('vetting.dynamic', { name: clientName })}${next}</p>`;
  }
  return '';
}

/** A list of scopes: what each gives first, its technical name after. */
export function scopeList(ui: PageContext, scopes: readonly ScopeLine[]): SafeHtml {
  return html`<ul class="scopes">
${scopes.map((scope) => html`<li>${describeScope(ui.t, scope)} <code>${scope.name}</code></li>\n`)}
</ul>`;
}

/** What a client asks of a person: the same on the consent page and the device's verification page. */
export interface ClientRequest {
  clientName: string;
  username: string;
  scopes: ScopeLine[];
  vetting?: ClientVetting;
  /** The API the access is for (RFC 8707). */
  resource?: { name: string; uri: string };
}

/** The heading, who is signed in, who vouches for the client, and the scopes asked for. */
export function clientRequestSummary(ui: PageContext, input: ClientRequest): SafeHtml {
  const { t } = ui;
  const vetting = input.vetting ?? { kind: 'operator' };
  const title = titleOf(input.clientName, vetting);
  return html`<h1>${t.html('consent.heading', { client: title })}</h1>
<p class="muted">${t.html('consent.signedInAs', { username: input.username })}</p>
${vettingNotice(ui, input.clientName, vetting)}
<p>${t.html('consent.asks', { client: title, count: input.scopes.length })}</p>
${scopeList(ui, input.scopes)}
${
  input.resource
    ? html`<p class="muted">${t.html('consent.resource', { name: input.resource.name, uri: input.resource.uri })}</p>
`
    : ''
}`;
}

/** The page's title for a client's request. */
export function clientRequestTitle(ui: PageContext, input: Pick<ClientRequest, 'clientName' | 'vetting'>): string {
  return ui.t.t('consent.title', { client: titleOf(input.clientName, input.vetting ?? { kind: 'operator' }) });
}

/** Allow and Deny, the buttons of the consent and verification pages' forms. */
export function allowOrDeny(ui: PageContext): SafeHtml {
  const { t } = ui;
  return html`<div class="actions">
<button type="submit" name="decision" value="allow">${t.t('consent.allow')}</button>
<button type="submit" name="decision" value="deny" class="secondary">${t.t('consent.deny')}</button>
</div>`;
}

export function consentPage(
  ui: PageContext,
  input: ClientRequest & { interaction: string; csrfToken: string },
): string {
  return layout(
    ui,
    clientRequestTitle(ui, input),
    html`${clientRequestSummary(ui, input)}
<form method="post" action="/consent">
<input type="hidden" name="interaction" value="${input.interaction}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
${allowOrDeny(ui)}
</form>`,
  );
}

/**
 * An error page: what happened and what to do in words, and the protocol's error code and
 * description (for whoever debugs the application) below them.
 */
export function errorPage(
  ui: PageContext,
  input: { title: Text; says: Text; error?: string; description?: string },
): string {
  const { t } = ui;
  const title = t.t(input.title.key, input.title.values);
  const details = { error: input.error ?? '', description: input.description ?? '' };
  const technical = input.error !== undefined ? html`<p class="muted">${t.html('error.details', details)}</p>` : '';
  return layout(
    ui,
    title,
    html`<h1>${title}</h1>
<p class="alert" role="alert">${say(ui, input.says)}</p>
<p>${t.t('error.goBack')}</p>
${technical}`,
  );
}

export function logoutConfirmPage(
  ui: PageContext,
  input: { logout: string; csrfToken: string; clientName: string | null; username: string; vetting?: ClientVetting },
): string {
  const { t } = ui;
  const vetting = input.vetting ?? { kind: 'operator' };
  const name = input.clientName === null ? null : titleOf(input.clientName, vetting);
  const asks = name ? html` ${t.html('logout.asks', { client: name })}` : '';
  return layout(
    ui,
    t.t('logout.title'),
    html`<h1>${t.t('logout.heading')}</h1>
<p class="client">${t.html('logout.signedInAs', { username: input.username })}${asks}</p>
${input.clientName === null ? '' : vettingNotice(ui, input.clientName, vetting)}
<form method="post" action="/logout">
<input type="hidden" name="logout" value="${input.logout}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<button type="submit">${t.t('logout.submit')}</button>
</form>`,
  );
}

export function signedOutPage(ui: PageContext): string {
  const { t } = ui;
  return layout(
    ui,
    t.t('signedOut.title'),
    html`<h1>${t.t('signedOut.heading')}</h1>
<p>${t.t('signedOut.close')}</p>`,
  );
}

/** The script that goes on from the page below once its iframes have loaded (src/ui/assets/frontchannel-logout.js). */
export const FRONTCHANNEL_LOGOUT_SCRIPT = '/assets/frontchannel-logout.js';

/**
 * The signed-out page of an RP-initiated logout that tells clients through the browser (Front-Channel
 * Logout 1.0 §4): their pages in hidden iframes, then on to `next` (the post_logout_redirect_uri), by
 * the script or the "Continue" link; with no `next`, the signed-out page as it is.
 */
export function frontchannelLogoutPage(ui: PageContext, input: { uris: string[]; next: string | null }): string {
  const { t } = ui;
  const title = t.t('signedOut.title');
  const frames = input.uris.map(
    (uri) => html`<iframe src="${uri}" title="${title}" hidden data-frontchannel-logout></iframe>
`,
  );
  const then =
    input.next === null
      ? html`<p>${t.t('signedOut.close')}</p>`
      : html`<p><a href="${input.next}" data-continue>${t.t('signedOut.continue')}</a></p>`;
  return layout(
    ui,
    title,
    html`<h1>${t.t('signedOut.heading')}</h1>
${then}
${frames}`,
    input.next === null ? [] : [FRONTCHANNEL_LOGOUT_SCRIPT],
  );
}
