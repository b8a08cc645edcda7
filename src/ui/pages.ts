// The sign-in, consent and error pages: complete documents, escaped by default, usable without
// JavaScript, every input labelled.
import type { ClientVetting } from '../oauth/registration/trust.ts';
import { html, type SafeHtml } from './html.ts';
import { PASSKEY_SCRIPTS, passkeySignIn, type PasskeysSection, passkeysSection } from './passkeys.ts';
import { linkedProvidersSection, type LinkedProviderRow, providerButtons, type ProviderButton } from './upstream.ts';

/** What a failed sign-in says, whichever of the username and password was wrong. */
export const LOGIN_FAILED = 'Incorrect username or password.';

/** A complete page; `scripts` are files of our own (the CSP allows no other), run deferred, in order. */
export function layout(title: string, body: SafeHtml, scripts: readonly string[] = []): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title}</title>
<link rel="stylesheet" href="/assets/tessera.css">
${scripts.map((src) => html`<script src="${src}" defer></script>\n`)}</head>
<body>
<main class="card">
${body}
</main>
</body>
</html>
`.value;
}

export function loginPage(input: {
  interaction: string;
  csrfToken: string;
  clientName: string;
  error?: string;
  /** Said above the form, not as an error (e.g. why the user signs in again). */
  note?: string;
  username?: string;
  action?: string;
  /** Who vouches for the client: the same notice as the consent page's. */
  vetting?: ClientVetting;
  /** The options of a sign-in with a passkey (its button and the username field's autofill), as JSON. */
  passkeyOptions?: string;
  /** Upstream providers to sign in with (src/ui/upstream.ts), a button each. */
  providers?: readonly ProviderButton[];
}): string {
  const vetting = input.vetting ?? { kind: 'operator' };
  const passkey = input.passkeyOptions !== undefined;
  return layout(
    'Sign in',
    html`<h1>Sign in</h1>
<p>Sign in to continue to <strong>${titleOf(input.clientName, vetting)}</strong>.</p>
${vettingNotice(input.clientName, vetting)}
${input.note ? html`<p role="status">${input.note}</p>` : ''}
${input.error ? html`<p class="alert" role="alert">${input.error}</p>` : ''}
<form method="post" action="${input.action ?? '/login'}">
<input type="hidden" name="interaction" value="${input.interaction}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<label for="username">Username</label>
<input type="text" id="username" name="username" autocomplete="${passkey ? 'username webauthn' : 'username'}"
  autocapitalize="none" spellcheck="false" required autofocus value="${input.username ?? ''}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
${
  input.passkeyOptions !== undefined
    ? passkeySignIn({ options: input.passkeyOptions, interaction: input.interaction, csrfToken: input.csrfToken })
    : ''
}
${providerButtons({ providers: input.providers ?? [], interaction: input.interaction, csrfToken: input.csrfToken })}`,
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
function vettingNotice(clientName: string, vetting: ClientVetting): SafeHtml | '' {
  const returning = vetting.kind !== 'operator' && vetting.returnHost !== null ? vetting.returnHost : null;
  const next = returning ? html` You will return to <strong>${returning}</strong>.` : '';
  if (vetting.kind === 'document') {
    return html`<p class="alert" role="note">This application is known only by its address,
<strong>${vetting.host}</strong>. It calls itself “${clientName}”, which nobody has checked.${next}</p>`;
  }
  if (vetting.kind === 'dynamic') {
    return html`<p class="alert" role="note">${clientName} registered itself: the operator of this service has not
reviewed it.${next}</p>`;
  }
  return '';
}

export function consentPage(input: {
  interaction: string;
  csrfToken: string;
  clientName: string;
  username: string;
  scopes: Array<{ name: string; description: string }>;
  vetting?: ClientVetting;
  /** The API the access is for (RFC 8707). */
  resource?: { name: string; uri: string };
}): string {
  const vetting = input.vetting ?? { kind: 'operator' };
  const title = titleOf(input.clientName, vetting);
  return layout(
    `Allow ${title}?`,
    html`<h1>Allow <strong>${title}</strong> access?</h1>
<p class="muted">Signed in as ${input.username}.</p>
${vettingNotice(input.clientName, vetting)}
<p>${title} asks to:</p>
<ul class="scopes">
${input.scopes.map((scope) => html`<li>${scope.description} <code>${scope.name}</code></li>\n`)}
</ul>
${
  input.resource
    ? html`<p class="muted">For the API ${input.resource.name} (<code>${input.resource.uri}</code>).</p>
`
    : ''
}
<form method="post" action="/consent">
<input type="hidden" name="interaction" value="${input.interaction}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<div class="actions">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>`,
  );
}

export function errorPage(input: { title: string; error: string; description: string }): string {
  return layout(
    input.title,
    html`<h1>${input.title}</h1>
<p class="alert" role="alert"><code>${input.error}</code>: ${input.description}</p>
<p class="muted">If you followed a link from an application, go back to it and try again.</p>`,
  );
}

export function logoutConfirmPage(input: {
  logout: string;
  csrfToken: string;
  clientName: string | null;
  username: string;
  vetting?: ClientVetting;
}): string {
  const vetting = input.vetting ?? { kind: 'operator' };
  const name = input.clientName === null ? null : titleOf(input.clientName, vetting);
  const asks = name ? html` <strong>${name}</strong> asks to sign you out.` : '';
  return layout(
    'Sign out',
    html`<h1>Sign out?</h1>
<p>You are signed in as <strong>${input.username}</strong>.${asks}</p>
${input.clientName === null ? '' : vettingNotice(input.clientName, vetting)}
<form method="post" action="/logout">
<input type="hidden" name="logout" value="${input.logout}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<button type="submit">Sign out</button>
</form>`,
  );
}

export function signedOutPage(): string {
  return layout(
    'Signed out',
    html`<h1>You are signed out</h1>
<p>You can close this window.</p>`,
  );
}

export interface AccountGrant {
  clientId: string;
  clientName: string;
  scopes: Array<{ name: string; description: string }>;
  since: string;
}

export interface RecentSignIn {
  at: string;
  ip: string;
  userAgent: string;
}

/** An app the user registered (RFC 7591). */
export interface RegisteredApp {
  clientId: string;
  name: string;
  redirectUris: string[];
  created: string;
}

export function accountPage(input: {
  username: string;
  csrfToken: string;
  applications: AccountGrant[];
  /** The apps the user registered with an access token carrying `apps`. */
  registeredApps?: RegisteredApp[];
  signIns: RecentSignIn[];
  /** What the password form says after an attempt: what was wrong, or that it changed. */
  password?: { error?: string; changed?: boolean };
  /** The user's passkeys, and the registration of a new one (./passkeys.ts). */
  passkeys?: PasskeysSection;
  /** False for a user without a password (one an upstream provider made): no form to change it. */
  hasPassword?: boolean;
  /** Upstream providers linked and to link (src/ui/upstream.ts), and what the last change said. */
  upstream?: {
    linked: readonly LinkedProviderRow[];
    available: readonly ProviderButton[];
    notice?: string | undefined;
    error?: string | undefined;
  };
}): string {
  return layout(
    'Your account',
    html`<h1>Your account</h1>
<p class="muted">Signed in as ${input.username}. <a href="/oauth2/logout">Sign out</a></p>
<h2>Applications with access</h2>
${
  input.applications.length === 0
    ? html`<p>No application has access to your account.</p>`
    : input.applications.map(
        (app) => html`<section class="grant">
<h3>${app.clientName}</h3>
<p class="muted">Since ${app.since}</p>
<ul class="scopes">
${app.scopes.map(
  (scope) => html`<li>${scope.description} <code>${scope.name}</code></li>
`,
)}
</ul>
<form method="post" action="/account/withdraw">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="client_id" value="${app.clientId}">
<button type="submit" class="secondary">Remove access for ${app.clientName}</button>
</form>
</section>
`,
      )
}
${
  input.registeredApps && input.registeredApps.length > 0
    ? html`<h2>Apps you registered</h2>
${input.registeredApps.map(
  (app) => html`<section class="grant">
<h3>${app.name}</h3>
<p class="muted">Client ID <code>${app.clientId}</code>, registered ${app.created}</p>
<ul class="scopes">
${app.redirectUris.map((uri) => html`<li><code>${uri}</code></li>\n`)}
</ul>
<form method="post" action="/account/apps/delete">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="client_id" value="${app.clientId}">
<button type="submit" class="secondary">Delete ${app.name}</button>
</form>
</section>
`,
)}`
    : ''
}
<h2>Recent sign-ins</h2>
${
  input.signIns.length === 0
    ? html`<p class="muted">None recorded.</p>`
    : html`<ul class="sign-ins">
${input.signIns.map(
  (s) => html`<li>${s.at} from ${s.ip} <span class="muted">${s.userAgent}</span></li>
`,
)}
</ul>`
}
${
  input.hasPassword === false
    ? ''
    : html`<h2>Change your password</h2>
${input.password?.error ? html`<p class="alert" role="alert">${input.password.error}</p>` : ''}
${input.password?.changed ? html`<p role="status">Your password has changed; your other sessions have ended.</p>` : ''}
<form method="post" action="/account/password">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<label for="current">Current password</label>
<input type="password" id="current" name="current" autocomplete="current-password" required>
<label for="new">New password</label>
<input type="password" id="new" name="new" autocomplete="new-password" required>
<button type="submit">Change password</button>
</form>`
}
${input.passkeys ? passkeysSection(input.passkeys, input.csrfToken) : ''}
${input.upstream ? linkedProvidersSection({ ...input.upstream, csrfToken: input.csrfToken }) : ''}`,
    input.passkeys ? PASSKEY_SCRIPTS : [],
  );
}
