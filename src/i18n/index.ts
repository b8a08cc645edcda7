// Message catalogues: every text a person reads on a page or in a mail comes from
// ./messages/<locale>.json, one file per language, written in ICU MessageFormat (plurals, selects,
// numbers; rich-text tags for markup) and formatted by FormatJS's intl-messageformat. Dates and
// numbers are formatted by Intl for the same language. How to add a text: docs/development.md.
import { IntlMessageFormat } from 'intl-messageformat';
import { escapeHtml, SafeHtml } from '../ui/html.ts';
import { type Locale, LOCALES } from './locales.ts';
import de from './messages/de.json' with { type: 'json' };
import en from './messages/en.json' with { type: 'json' };
import es from './messages/es.json' with { type: 'json' };
import fr from './messages/fr.json' with { type: 'json' };
import ja from './messages/ja.json' with { type: 'json' };
import ptBR from './messages/pt-BR.json' with { type: 'json' };

export {
  acceptedLanguages,
  isLocale,
  LOCALE_NAMES,
  LOCALES,
  type Locale,
  matchLocale,
  negotiateLocale,
} from './locales.ts';

/** A text's name in the catalogues: English's keys are the reference every language must have. */
export type MessageKey = keyof typeof en;

/** Every catalogue, by language (the catalogue test checks each has exactly English's keys). */
export const CATALOGUES: Readonly<Record<Locale, Readonly<Record<string, string>>>> = {
  en,
  de,
  fr,
  es,
  'pt-BR': ptBR,
  ja,
};

/** A tag of a message (`<link>…</link>`) made into markup by the caller: its content comes escaped. */
export type Tag = (content: SafeHtml) => SafeHtml;

/** What a message's arguments may be: text and numbers, escaped when made into markup; Dates. */
export type Values = Record<string, string | number | Date | Tag>;

/** The tags any message may use without the caller saying what they are. */
const DEFAULT_TAGS: Record<string, Tag> = {
  strong: (content) => new SafeHtml(`<strong>${content.value}</strong>`),
  code: (content) => new SafeHtml(`<code>${content.value}</code>`),
  em: (content) => new SafeHtml(`<em>${content.value}</em>`),
};

/** The texts, dates and numbers of one language. */
export interface Translator {
  readonly locale: Locale;
  /** A text, as plain text (a title, an attribute): tags keep only their content. */
  t(key: MessageKey, values?: Values): string;
  /** A text as markup: every value and the catalogue's own words are escaped; tags become elements. */
  html(key: MessageKey, values?: Values): SafeHtml;
  /** A date and time with its time zone named ("26 November 2026, 01:13 UTC"), from epoch seconds. */
  dateTime(epochSeconds: number): string;
  /** A day ("26 Nov 2026"), from epoch seconds. */
  date(epochSeconds: number): string;
  /** A number, grouped as the language groups digits. */
  number(value: number): string;
}

/** The time zone dates are shown in: the server does not know the reader's, so it is named. */
const TIME_ZONE = 'UTC';

class CatalogueTranslator implements Translator {
  readonly locale: Locale;
  readonly #messages: Readonly<Record<string, string>>;
  readonly #compiled = new Map<string, IntlMessageFormat>();
  readonly #dateTime: Intl.DateTimeFormat;
  readonly #date: Intl.DateTimeFormat;
  readonly #number: Intl.NumberFormat;

  constructor(locale: Locale) {
    this.locale = locale;
    this.#messages = CATALOGUES[locale];
    this.#dateTime = new Intl.DateTimeFormat(locale, {
      year: 'numeric',
      month: 'long',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      timeZone: TIME_ZONE,
      timeZoneName: 'short',
    });
    this.#date = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: TIME_ZONE });
    this.#number = new Intl.NumberFormat(locale);
  }

  #format(key: MessageKey): IntlMessageFormat {
    let compiled = this.#compiled.get(key);
    if (!compiled) {
      // A key missing from a catalogue is a bug the catalogue test catches; English stands in meanwhile.
      const message = this.#messages[key] ?? en[key];
      if (message === undefined) throw new TypeError(`no message ${JSON.stringify(key)}`);
      compiled = new IntlMessageFormat(message, this.locale);
      this.#compiled.set(key, compiled);
    }
    return compiled;
  }

  t(key: MessageKey, values: Values = {}): string {
    const plain: Record<string, unknown> = { strong: text, code: text, em: text };
    for (const [name, value] of Object.entries(values)) plain[name] = typeof value === 'function' ? text : value;
    return joinParts(this.#format(key).format(plain as never), (part) => String(part));
  }

  html(key: MessageKey, values: Values = {}): SafeHtml {
    const markup: Record<string, unknown> = {};
    for (const [name, tag] of Object.entries(DEFAULT_TAGS)) markup[name] = markupTag(tag);
    for (const [name, value] of Object.entries(values)) {
      markup[name] = typeof value === 'function' ? markupTag(value) : value;
    }
    const out = this.#format(key).format(markup as never);
    return new SafeHtml(joinParts(out, (part) => (part instanceof SafeHtml ? part.value : escapeHtml(String(part)))));
  }

  dateTime(epochSeconds: number): string {
    return this.#dateTime.format(new Date(epochSeconds * 1000));
  }

  date(epochSeconds: number): string {
    return this.#date.format(new Date(epochSeconds * 1000));
  }

  number(value: number): string {
    return this.#number.format(value);
  }
}

/** A tag in plain text: its content alone. */
function text(chunks: unknown[]): string {
  return chunks.map(String).join('');
}

/** A tag in markup: its content (text escaped, markup kept) handed to the tag's maker. */
function markupTag(tag: Tag): (chunks: unknown[]) => SafeHtml {
  return (chunks) =>
    tag(new SafeHtml(chunks.map((c) => (c instanceof SafeHtml ? c.value : escapeHtml(String(c)))).join('')));
}

function joinParts(out: unknown, render: (part: unknown) => string): string {
  return Array.isArray(out) ? out.map(render).join('') : render(out);
}

const translators = new Map<Locale, Translator>(LOCALES.map((locale) => [locale, new CatalogueTranslator(locale)]));

/** The translator of a language (one per language, shared: compiled messages are kept). */
export function translator(locale: Locale): Translator {
  return translators.get(locale)!;
}
