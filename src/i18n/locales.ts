// The languages of the pages (and mails), and which one a person gets: the first of the client's
// `ui_locales` (OIDC Core §3.1.2.1) that we have, else the first of the browser's Accept-Language
// (RFC 9110 §12.5.4), else the operator's default.

/** Every language with a complete catalogue (./messages/<locale>.json), as BCP 47 tags. */
export const LOCALES = ['en', 'de', 'fr', 'es', 'pt-BR', 'ja'] as const;

export type Locale = (typeof LOCALES)[number];

/** Each language's name in itself, for the language switch. */
export const LOCALE_NAMES: Readonly<Record<Locale, string>> = {
  en: 'English',
  de: 'Deutsch',
  fr: 'Français',
  es: 'Español',
  'pt-BR': 'Português (Brasil)',
  ja: '日本語',
};

export function isLocale(value: string): value is Locale {
  return (LOCALES as readonly string[]).includes(value);
}

/**
 * The language we have for one BCP 47 tag: the same tag (any case), else the same primary language
 * (`de-AT` is German, `pt-PT` and `pt` are Portuguese: Brazilian is the one we have).
 */
export function matchLocale(tag: string): Locale | undefined {
  const wanted = tag.trim().toLowerCase();
  if (wanted === '' || wanted === '*') return undefined;
  const exact = LOCALES.find((locale) => locale.toLowerCase() === wanted);
  if (exact) return exact;
  const primary = wanted.split('-')[0];
  return LOCALES.find((locale) => locale.toLowerCase().split('-')[0] === primary);
}

/** The languages of an Accept-Language header, most wanted first (q=0 means "not this one"). */
export function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  const ranges: Array<{ tag: string; q: number; order: number }> = [];
  for (const [order, part] of header.split(',').slice(0, 32).entries()) {
    const [tag = '', ...params] = part.split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (tag.trim() !== '' && Number.isFinite(q) && q > 0) ranges.push({ tag: tag.trim(), q, order });
  }
  return ranges.sort((a, b) => b.q - a.q || a.order - b.order).map((r) => r.tag);
}

/**
 * The language of a page: the person's own choice on our pages (the switch), else the first of the
 * client's `ui_locales` we have, else the first of Accept-Language we have, else the default.
 */
export function negotiateLocale(input: {
  chosen?: string | undefined;
  uiLocales?: readonly string[] | undefined;
  acceptLanguage?: string | undefined;
  fallback: Locale;
}): Locale {
  const chosen = input.chosen && isLocale(input.chosen) ? input.chosen : undefined;
  if (chosen) return chosen;
  for (const tag of input.uiLocales ?? []) {
    const locale = matchLocale(tag);
    if (locale) return locale;
  }
  for (const tag of acceptedLanguages(input.acceptLanguage)) {
    const locale = matchLocale(tag);
    if (locale) return locale;
  }
  return input.fallback;
}
