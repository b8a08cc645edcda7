// What every page shares: the document around it, in the reader's language (`lang`), with the switch
// to the other languages (plain links: it works without JavaScript).
import { LOCALE_NAMES, LOCALES, type Locale, type MessageKey, type Translator, type Values } from '../i18n/index.ts';
import { type Brand, DEFAULT_BRAND } from './brand.ts';
import { html, type SafeHtml } from './html.ts';

/** What a page is rendered with besides its own input: the reader's language, and how to switch it. */
export interface PageContext {
  t: Translator;
  /** This page's address in another language, for the switch; null where there is none (a form's answer). */
  languageHref: ((locale: Locale) => string) | null;
  /** The operator's name, logo and stylesheet (src/ui/brand.ts). */
  brand: Brand;
}

/** A button posting one thing to `action` (withdraw, remove, link, unlink): the form token and its one field. */
export function postButton(action: string, csrfToken: string, field: [string, string], label: string): SafeHtml {
  return html`<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${csrfToken}">
<input type="hidden" name="${field[0]}" value="${field[1]}">
<button type="submit" class="secondary">${label}</button>
</form>`;
}

/** A text a route hands a page (an error, a note): a message of the catalogues and its values. */
export interface Text {
  key: MessageKey;
  values?: Values;
}

/** A text of the catalogues as markup. */
export function say(ui: PageContext, text: Text): SafeHtml {
  return ui.t.html(text.key, text.values);
}

/** A page context without a switch (tests, and pages with no address of their own). */
export function plainContext(t: Translator, brand: Brand = DEFAULT_BRAND): PageContext {
  return { t, languageHref: null, brand };
}

function languageSwitch(ui: PageContext): SafeHtml | '' {
  const href = ui.languageHref;
  if (!href || LOCALES.length < 2) return '';
  return html`<nav class="languages" aria-label="${ui.t.t('layout.languages')}">
<ul>
${LOCALES.map((locale) => {
  const current = locale === ui.t.locale ? html` aria-current="true"` : '';
  const name = LOCALE_NAMES[locale];
  return html`<li><a href="${href(locale)}" lang="${locale}" hreflang="${locale}"${current}>${name}</a></li>\n`;
})}</ul>
</nav>`;
}

/**
 * A complete page; `scripts` are files of our own (the CSP allows no other), run deferred, in order.
 * A `wide` page (the admin console's tables) takes more of the screen than a form does.
 */
export function layout(
  ui: PageContext,
  title: string,
  body: SafeHtml,
  scripts: readonly string[] = [],
  options: { wide?: boolean } = {},
): string {
  // The logo says nothing the name beside it does not: an empty alt.
  const logo = ui.brand.logo ? html`<img src="${ui.brand.logo}" alt="">` : '';
  return html`<!doctype html>
<html lang="${ui.t.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${ui.t.t('layout.title', { page: title, brand: ui.brand.name })}</title>
<link rel="stylesheet" href="${ui.brand.stylesheet}">
${scripts.map((src) => html`<script src="${src}" defer></script>\n`)}</head>
<body>
<header class="brand">${logo}<span>${ui.brand.name}</span></header>
<main class="${options.wide ? 'card wide' : 'card'}">
${body}
</main>
${languageSwitch(ui)}
</body>
</html>
`.value;
}
