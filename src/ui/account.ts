// The account page: the applications with access (each withdrawable), the apps the user registered,
// the recent sign-ins, the password form, the profile (the claims the person owns), the passkeys, the
// authenticator app and recovery codes, and the linked providers.
import { deviceName } from './device.ts';
import { html, type SafeHtml } from './html.ts';
import { layout, type PageContext, postButton, say, type Text } from './layout.ts';
import { PASSKEY_SCRIPTS, type PasskeysSection, passkeysSection } from './passkeys.ts';
import { scopeList } from './pages.ts';
import { type SecondFactorsSection, secondFactorsSection } from './second-factors.ts';
import type { ScopeLine } from './scopes.ts';
import { emailSection } from './mail-pages.ts';
import { type ProfileSection, profileSection } from './profile.ts';
import { linkedProvidersSection, type LinkedProviderRow, type ProviderButton } from './upstream.ts';

export interface AccountGrant {
  clientId: string;
  clientName: string;
  scopes: ScopeLine[];
  /** The first grant's time, epoch seconds. */
  since: number;
}

export interface RecentSignIn {
  /** Epoch seconds. */
  at: number;
  ip: string | null;
  userAgent: string;
}

/** An app the user registered (RFC 7591). */
export interface RegisteredApp {
  clientId: string;
  name: string;
  redirectUris: string[];
  /** Epoch seconds. */
  created: number;
}

/** A sign-in: with which browser on which system, when (its time zone named), and from which address. */
function signInLine(ui: PageContext, signIn: RecentSignIn): SafeHtml {
  const { t } = ui;
  const when = t.t('account.signIn', {
    at: t.dateTime(signIn.at),
    address: signIn.ip ?? t.t('account.unknownAddress'),
  });
  return html`<strong>${deviceName(ui, signIn.userAgent)}</strong><br><span class="muted">${when}</span>`;
}

export function accountPage(
  ui: PageContext,
  input: {
    username: string;
    csrfToken: string;
    applications: AccountGrant[];
    /** The apps the user registered with an access token carrying `apps`. */
    registeredApps?: RegisteredApp[];
    signIns: RecentSignIn[];
    /** What the password form says after an attempt: what was wrong, or that it changed. */
    password?: { error?: Text; changed?: boolean };
    /** The user's passkeys, and the registration of a new one (./passkeys.ts). */
    passkeys?: PasskeysSection;
    /** The authenticator app and recovery codes (./second-factors.ts); absent with TESSERA_MFA=off. */
    secondFactors?: SecondFactorsSection;
    /** False for a user without a password (one an upstream provider made): no form to change it. */
    hasPassword?: boolean;
    /** Upstream providers linked and to link (src/ui/upstream.ts), and what the last change said. */
    upstream?: {
      linked: readonly LinkedProviderRow[];
      available: readonly ProviderButton[];
      notice?: Text | undefined;
      error?: Text | undefined;
    };
    /** The address and the form to change it (./mail-pages.ts), when mail is available. */
    email?: Parameters<typeof emailSection>[1];
    /** The claims the person owns and their form (./profile.ts). */
    profile?: ProfileSection;
  },
): string {
  const { t } = ui;
  const passwordError = input.password?.error;
  /** A button for one client: its access withdrawn, or the app the user registered deleted. */
  const clientButton = (action: string, clientId: string, label: string) =>
    postButton(action, input.csrfToken, ['client_id', clientId], label);
  return layout(
    ui,
    t.t('account.title'),
    html`<h1>${t.t('account.title')}</h1>
<p class="muted">${t.html('account.signedInAs', { username: input.username })}
<a href="/oauth2/logout">${t.t('account.signOut')}</a></p>
<h2>${t.t('account.applications')}</h2>
${
  input.applications.length === 0
    ? html`<p>${t.t('account.noApplications')}</p>`
    : input.applications.map(
        (app) => html`<section class="grant">
<h3>${app.clientName}</h3>
<p class="muted">${t.t('account.since', { date: t.date(app.since) })}</p>
${scopeList(ui, app.scopes)}
${clientButton('/account/withdraw', app.clientId, t.t('account.withdraw', { client: app.clientName }))}
</section>
`,
      )
}
${
  input.registeredApps && input.registeredApps.length > 0
    ? html`<h2>${t.t('account.registeredApps')}</h2>
${input.registeredApps.map(
  (app) => html`<section class="grant">
<h3>${app.name}</h3>
<p class="muted">${t.html('account.registered', { clientId: app.clientId, date: t.date(app.created) })}</p>
<ul class="scopes">
${app.redirectUris.map((uri) => html`<li><code>${uri}</code></li>\n`)}
</ul>
${clientButton('/account/apps/delete', app.clientId, t.t('account.deleteApp', { name: app.name }))}
</section>
`,
)}`
    : ''
}
<h2>${t.t('account.signIns')}</h2>
${
  input.signIns.length === 0
    ? html`<p class="muted">${t.t('account.noSignIns')}</p>`
    : html`<ul class="sign-ins">
${input.signIns.map(
  (s) => html`<li>${signInLine(ui, s)}</li>
`,
)}
</ul>`
}
${
  input.hasPassword === false
    ? ''
    : html`<h2>${t.t('account.password')}</h2>
${passwordError ? html`<p class="alert" id="password-error" role="alert">${say(ui, passwordError)}</p>` : ''}
${input.password?.changed ? passwordChanged(ui, input.upstream?.linked ?? []) : ''}
<form method="post" action="/account/password">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<label for="current">${t.t('account.currentPassword')}</label>
<input type="password" id="current" name="current" autocomplete="current-password" required${
        passwordError ? html` autofocus aria-invalid="true" aria-describedby="password-error"` : ''
      }>
<label for="new">${t.t('account.newPassword')}</label>
<input type="password" id="new" name="new" autocomplete="new-password" required>
<button type="submit">${t.t('account.changePassword')}</button>
</form>`
}
${input.email ? emailSection(ui, input.email) : ''}
${input.profile ? profileSection(ui, { ...input.profile, csrfToken: input.csrfToken }) : ''}
${input.passkeys ? passkeysSection(ui, input.passkeys, input.csrfToken) : ''}
${input.secondFactors ? secondFactorsSection(ui, input.secondFactors, input.csrfToken) : ''}
${input.upstream ? linkedProvidersSection(ui, { ...input.upstream, csrfToken: input.csrfToken }) : ''}`,
    input.passkeys ? PASSKEY_SCRIPTS : [],
  );
}

/**
 * A changed password (on this page, or by a reset by mail): said, and which upstream providers still
 * sign the person in without it, since whoever took the password may have linked one.
 */
function passwordChanged(ui: PageContext, linked: readonly LinkedProviderRow[]): SafeHtml {
  const { t } = ui;
  const providers = linked.map((row) => row.name).join(', ');
  return html`<p role="status">${t.t('account.passwordChanged')}${
    linked.length > 0 ? html` ${t.t('account.passwordChangedLinked', { providers })}` : ''
  }</p>`;
}
