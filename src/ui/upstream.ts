// The pages and parts of pages of upstream providers (src/upstream): a button per provider on the
// sign-in pages (its name only: no logo is fetched from anywhere), the link page, the page of a
// sign-in through a provider that failed (always with the way back to signing in here), and the
// account page's list of linked providers.
import { html, type SafeHtml } from './html.ts';
import { layout } from './pages.ts';

/** A provider as its button shows it. */
export interface ProviderButton {
  id: string;
  name: string;
}

/** One form per provider, each posting this page's interaction (none for the account's sign-in). */
export function providerButtons(input: {
  providers: readonly ProviderButton[];
  interaction: string;
  csrfToken: string;
}): SafeHtml | '' {
  if (input.providers.length === 0) return '';
  return html`<p class="muted or">or</p>
${input.providers.map(
  (provider) => html`<form method="post" action="/login/upstream/${provider.id}" class="provider">
<input type="hidden" name="interaction" value="${input.interaction}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<button type="submit" class="secondary">Sign in with ${provider.name}</button>
</form>
`,
)}`;
}

/** Where a page sends a person back to: the sign-in page of their request, or the account's. */
export interface WayBack {
  href: string;
  label: string;
}

export function upstreamFailurePage(input: { title: string; description: string; back: WayBack }): string {
  return layout(
    input.title,
    html`<h1>${input.title}</h1>
<p class="alert" role="alert">${input.description}</p>
<p><a href="${input.back.href}">${input.back.label}</a></p>`,
  );
}

/** The link page: sign in to the account to link the provider's account to it. */
export function linkAccountPage(input: {
  providerName: string;
  email: string | null;
  reason: 'email_exists' | 'link_only';
  link: string;
  csrfToken: string;
  error?: string;
  username?: string;
  back: WayBack;
}): string {
  const { providerName } = input;
  return layout(
    `Link your ${providerName} account`,
    html`<h1>Link your ${providerName} account</h1>
${
  input.reason === 'email_exists'
    ? html`<p>An account here has the email address <strong>${input.email}</strong>. If it is yours, sign in to it to
link your ${providerName} account; from then on you can sign in with either.</p>`
    : html`<p>Your ${providerName} account is not linked to an account here. Sign in to your account to link it;
from then on you can sign in with ${providerName}.</p>`
}
${input.error ? html`<p class="alert" role="alert">${input.error}</p>` : ''}
<form method="post" action="/login/link">
<input type="hidden" name="link" value="${input.link}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<label for="username">Username</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false"
  required autofocus value="${input.username ?? ''}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in and link</button>
</form>
<p class="muted"><a href="${input.back.href}">${input.back.label}</a></p>`,
  );
}

export interface LinkedProviderRow {
  providerId: string;
  name: string;
  email: string | null;
  since: string;
  canUnlink: boolean;
}

/** The account page's providers: those linked (each unlinkable unless the last way in), and the others. */
export function linkedProvidersSection(input: {
  linked: readonly LinkedProviderRow[];
  available: readonly ProviderButton[];
  csrfToken: string;
  notice?: string | undefined;
  error?: string | undefined;
}): SafeHtml | '' {
  if (input.linked.length === 0 && input.available.length === 0) return '';
  return html`<h2>Linked accounts</h2>
${input.notice ? html`<p role="status">${input.notice}</p>` : ''}
${input.error ? html`<p class="alert" role="alert">${input.error}</p>` : ''}
${input.linked.map(
  (link) => html`<section class="grant linked-provider">
<h3>${link.name}</h3>
<p class="muted">Linked ${link.since}${link.email ? html` as ${link.email}` : ''}</p>
${
  link.canUnlink
    ? html`<form method="post" action="/account/upstream/unlink">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="provider" value="${link.providerId}">
<button type="submit" class="secondary">Unlink ${link.name}</button>
</form>`
    : html`<p class="muted">This is how you sign in: it cannot be unlinked while it is your only way in.</p>`
}
</section>
`,
)}
${input.available.map(
  (provider) => html`<form method="post" action="/account/upstream/link">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="provider" value="${provider.id}">
<button type="submit" class="secondary">Link ${provider.name}</button>
</form>
`,
)}`;
}

/** What a failed sign-in through a provider says (src/authn/steps/upstream.ts FailureReason). */
export function failureText(
  reason: string,
  provider: string | null,
  providerError?: string,
): { title: string; description: string } {
  const name = provider ?? 'the provider';
  switch (reason) {
    case 'unavailable':
      return {
        title: `${name} did not answer`,
        description: `Signing in with ${name} is not possible right now. Try again later, or sign in another way.`,
      };
    case 'provider_error':
      return providerError === 'access_denied'
        ? { title: `Signing in with ${name} was cancelled`, description: `${name} did not sign you in.` }
        : {
            title: `${name} refused the sign-in`,
            description: `${name} answered ${providerError ?? 'with an error'}. Try again, or sign in another way.`,
          };
    case 'invalid_response':
      return {
        title: `${name}'s answer could not be verified`,
        description:
          `The answer from ${name} failed our checks, so you were not signed in. ` +
          'Try again, or sign in another way.',
      };
    case 'misconfigured':
      return {
        title: `Signing in with ${name} is not set up correctly`,
        description: 'Tell the people who run this service. Meanwhile, sign in another way.',
      };
    case 'unknown_provider':
      return {
        title: 'This way of signing in is not available',
        description: 'It may have been removed. Sign in another way.',
      };
    case 'disabled':
      return { title: 'This account is disabled', description: 'Ask the people who run this service.' };
    case 'linked_elsewhere':
      return {
        title: `That ${name} account belongs to another account here`,
        description: `It is linked to another account, so it was not linked to yours.`,
      };
    case 'provider_taken':
      return { title: `You have another ${name} account linked`, description: `Unlink it first to link this one.` };
    default:
      return {
        title: 'This sign-in has expired',
        description: 'It was started in another tab or browser, or too long ago. Start again.',
      };
  }
}
