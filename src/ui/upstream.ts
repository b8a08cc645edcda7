// The pages and parts of pages of upstream providers (src/upstream): a button per provider on the
// sign-in pages (its name only: no logo is fetched from anywhere), the link page, the page of a
// sign-in through a provider that failed (always with the way back to signing in here), and the
// account page's list of linked providers.
import type { MessageKey } from '../i18n/index.ts';
import { html, type SafeHtml } from './html.ts';
import { layout, type PageContext, postButton, say, type Text } from './layout.ts';

/** A provider as its button shows it. */
export interface ProviderButton {
  id: string;
  name: string;
}

/** One form per provider, each posting this page's interaction (none for the account's sign-in). */
export function providerButtons(
  ui: PageContext,
  input: { providers: readonly ProviderButton[]; interaction: string; csrfToken: string },
): SafeHtml | '' {
  if (input.providers.length === 0) return '';
  return html`<p class="muted or">${ui.t.t('login.or')}</p>
${input.providers.map(
  (provider) => html`<form method="post" action="/login/upstream/${provider.id}" class="provider">
<input type="hidden" name="interaction" value="${input.interaction}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<button type="submit" class="secondary">${ui.t.t('upstream.signInWith', { provider: provider.name })}</button>
</form>
`,
)}`;
}

/** Where a page sends a person back to: the sign-in page of their request, or the account's. */
export interface WayBack {
  href: string;
  label: Text;
}

export function upstreamFailurePage(
  ui: PageContext,
  input: { title: Text; says: Text; provider: string | null; back: WayBack },
): string {
  const { t } = ui;
  // Only the failures of an unknown provider (and an expired flow) have none, and their texts name none.
  const name = { provider: input.provider ?? '' };
  const title = t.t(input.title.key, { ...input.title.values, ...name });
  return layout(
    ui,
    title,
    html`<h1>${title}</h1>
<p class="alert" role="alert">${say(ui, { key: input.says.key, values: { ...input.says.values, ...name } })}</p>
<p><a href="${input.back.href}">${say(ui, input.back.label)}</a></p>`,
  );
}

/** The link page: sign in to the account to link the provider's account to it. */
export function linkAccountPage(
  ui: PageContext,
  input: {
    providerName: string;
    email: string | null;
    reason: 'email_exists' | 'link_only';
    link: string;
    csrfToken: string;
    error?: Text;
    username?: string;
    back: WayBack;
  },
): string {
  const { t } = ui;
  const provider = input.providerName;
  const invalid = input.error !== undefined;
  return layout(
    ui,
    t.t('link.title', { provider }),
    html`<h1>${t.t('link.title', { provider })}</h1>
<p>${
      input.reason === 'email_exists'
        ? t.html('link.emailExists', { provider, email: input.email ?? '' })
        : t.html('link.notLinked', { provider })
    }</p>
${input.error ? html`<p class="alert" id="link-error" role="alert">${say(ui, input.error)}</p>` : ''}
<form method="post" action="/login/link">
<input type="hidden" name="link" value="${input.link}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<label for="username">${t.t('login.username')}</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false"
  required autofocus value="${input.username ?? ''}"${
    invalid ? html` aria-invalid="true" aria-describedby="link-error"` : ''
  }>
<label for="password">${t.t('login.password')}</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">${t.t('link.submit')}</button>
</form>
<p class="muted"><a href="${input.back.href}">${say(ui, input.back.label)}</a></p>`,
  );
}

/** A linked account as the account page lists it (src/account/upstream.ts finds them). */
export interface LinkedProviderRow {
  providerId: string;
  name: string;
  /** The email the provider stated when it was linked. */
  email: string | null;
  /** When it was linked, epoch seconds. */
  since: number;
  /** When it last signed the user in, epoch seconds; null before the first time. */
  lastUsed: number | null;
  /** False when it is the user's last way in. */
  canUnlink: boolean;
}

function linkedSince(ui: PageContext, link: LinkedProviderRow): Record<string, string> {
  return { date: ui.t.date(link.since), email: link.email ?? '', hasEmail: link.email ? 'yes' : 'no' };
}

/** The account page's providers: those linked (each unlinkable unless the last way in), and the others. */
export function linkedProvidersSection(
  ui: PageContext,
  input: {
    linked: readonly LinkedProviderRow[];
    available: readonly ProviderButton[];
    csrfToken: string;
    notice?: Text | undefined;
    error?: Text | undefined;
  },
): SafeHtml | '' {
  const { t } = ui;
  if (input.linked.length === 0 && input.available.length === 0) return '';
  return html`<h2>${t.t('linked.title')}</h2>
${input.notice ? html`<p role="status">${say(ui, input.notice)}</p>` : ''}
${input.error ? html`<p class="alert" role="alert">${say(ui, input.error)}</p>` : ''}
${input.linked.map(
  (link) => html`<section class="grant linked-provider">
<h3>${link.name}</h3>
<p class="muted">${t.t('linked.since', linkedSince(ui, link))}</p>
<p class="muted">${
    link.lastUsed === null ? t.t('linked.notUsed') : t.t('linked.lastUsed', { date: ui.t.date(link.lastUsed) })
  }</p>
${
  link.canUnlink
    ? postButton(
        '/account/upstream/unlink',
        input.csrfToken,
        ['provider', link.providerId],
        t.t('linked.unlink', { provider: link.name }),
      )
    : html`<p class="muted">${t.t('linked.onlyWayIn')}</p>`
}
</section>
`,
)}
${input.available.map(
  (provider) => html`${postButton(
    '/account/upstream/link',
    input.csrfToken,
    ['provider', provider.id],
    t.t('linked.link', { provider: provider.name }),
  )}
`,
)}`;
}

/** A failure's two messages: its title and what it says. */
type FailureMessages = readonly [title: MessageKey, says: MessageKey];

/** A failure's messages by its reason; a reason not here (an expired or unknown state) says EXPIRED. */
const FAILURES: Readonly<Record<string, FailureMessages>> = {
  unavailable: ['upstream.unavailable.title', 'upstream.unavailable.says'],
  invalid_response: ['upstream.invalidResponse.title', 'upstream.invalidResponse.says'],
  misconfigured: ['upstream.misconfigured.title', 'upstream.misconfigured.says'],
  unknown_provider: ['upstream.unknownProvider.title', 'upstream.unknownProvider.says'],
  disabled: ['upstream.disabled.title', 'upstream.disabled.says'],
  linked_elsewhere: ['upstream.linkedElsewhere.title', 'upstream.linkedElsewhere.says'],
  provider_taken: ['upstream.providerTaken.title', 'upstream.providerTaken.says'],
};
const CANCELLED: FailureMessages = ['upstream.cancelled.title', 'upstream.cancelled.says'];
const REFUSED: FailureMessages = ['upstream.refused.title', 'upstream.refused.says'];
const EXPIRED: FailureMessages = ['upstream.expired.title', 'upstream.expired.says'];

/** What a failed sign-in through a provider says (src/authn/upstream/step.ts FailureReason). */
export function failureText(
  reason: string,
  provider: string | null,
  providerError?: string,
): { title: Text; says: Text; provider: string | null } {
  const pair = ([title, says]: FailureMessages, values: Record<string, string> = {}) => ({
    title: { key: title, values },
    says: { key: says, values },
    provider,
  });
  if (reason === 'provider_error') {
    // The person said no at the provider (RFC 6749 §4.1.2.1 access_denied): cancelled, not refused.
    return providerError === 'access_denied' ? pair(CANCELLED) : pair(REFUSED, { error: providerError ?? '' });
  }
  return pair(Object.hasOwn(FAILURES, reason) ? FAILURES[reason]! : EXPIRED);
}
