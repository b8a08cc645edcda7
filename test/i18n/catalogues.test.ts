// The message catalogues: every language has exactly English's texts, each a valid ICU message with
// the same arguments and tags as English's, and every text is used by the code.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { IntlMessageFormat } from 'intl-messageformat';
import { CATALOGUES, LOCALES, negotiateLocale, translator } from '../../src/i18n/index.ts';

const MESSAGES = new URL('../../src/i18n/messages/', import.meta.url);
const SRC = new URL('../../src/', import.meta.url);

type Node = { type: number; value?: string; options?: Record<string, { value: Node[] }>; children?: Node[] };

/** The arguments and tags a message uses, with their kinds (1 argument, 2 number, 5 select, 6 plural, 8 tag). */
function shape(ast: Node[], into = new Set<string>()): Set<string> {
  for (const node of ast) {
    if (node.type !== 0 && node.type !== 7 && node.value !== undefined)
      into.add(`${node.value}:${node.type === 1 ? 1 : node.type}`);
    for (const option of Object.values(node.options ?? {})) shape(option.value, into);
    if (node.children) shape(node.children, into);
  }
  return into;
}

function sourceFiles(dir: URL): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('message catalogues', () => {
  const english = CATALOGUES.en;

  it('there is one catalogue file per language, and one language per file', () => {
    const files = readdirSync(MESSAGES).filter((f) => f.endsWith('.json'));
    assert.deepEqual(files.map((f) => f.replace(/\.json$/, '')).sort(), [...LOCALES].sort());
  });

  for (const locale of LOCALES) {
    it(`${locale}: has every text and no other`, () => {
      const catalogue = JSON.parse(readFileSync(new URL(`${locale}.json`, MESSAGES), 'utf8')) as Record<string, string>;
      const missing = Object.keys(english).filter((key) => !(key in catalogue));
      const extra = Object.keys(catalogue).filter((key) => !(key in english));
      assert.deepEqual({ missing, extra }, { missing: [], extra: [] });
    });

    it(`${locale}: every text is a valid message with English's arguments and tags`, () => {
      for (const [key, message] of Object.entries(CATALOGUES[locale])) {
        const ast = new IntlMessageFormat(message, locale).getAst() as unknown as Node[];
        const reference = new IntlMessageFormat(
          english[key as keyof typeof english],
          'en',
        ).getAst() as unknown as Node[];
        assert.deepEqual([...shape(ast)].sort(), [...shape(reference)].sort(), `${locale} ${key}`);
        assert.equal(message.trim(), message, `${locale} ${key}: no leading or trailing space`);
        assert.notEqual(message, '', `${locale} ${key}`);
      }
    });
  }

  it('every text is used by the code, by its name', () => {
    const code = sourceFiles(SRC)
      .filter((file) => !file.includes(`${join('src', 'i18n')}`))
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const unused = Object.keys(english).filter((key) => !code.includes(`'${key}'`));
    assert.deepEqual(unused, []);
  });

  it('plurals follow the language: one second, two seconds', () => {
    const t = translator('en');
    assert.match(t.t('throttle.wait', { minutes: 0, seconds: 1 }), /in 1 second\./);
    assert.match(t.t('throttle.wait', { minutes: 0, seconds: 2 }), /in 2 seconds\./);
    assert.match(t.t('throttle.locked', { minutes: 15, seconds: 0 }), /locked\. Try again in 15 minutes\./);
  });

  it('markup: values and the catalogue are escaped, tags become elements', () => {
    const t = translator('en');
    assert.equal(
      t.html('login.toClient', { client: '<img src=x>' }).value,
      'Sign in to continue to <strong>&lt;img src=x&gt;</strong>.',
    );
    assert.equal(t.t('login.toClient', { client: 'A&B' }), 'Sign in to continue to A&B.');
  });

  it('the language: the choice, then ui_locales, then Accept-Language, then the default', () => {
    assert.equal(negotiateLocale({ fallback: 'en' }), 'en');
    assert.equal(negotiateLocale({ acceptLanguage: 'xx, en;q=0.5', fallback: 'en' }), 'en');
    assert.equal(negotiateLocale({ uiLocales: ['xx', 'en-GB'], fallback: 'en' }), 'en');
    assert.equal(negotiateLocale({ chosen: 'nope', fallback: 'en' }), 'en');
    assert.equal(negotiateLocale({ acceptLanguage: 'de-AT,de;q=0.9,en;q=0.8', fallback: 'en' }), 'de');
    assert.equal(negotiateLocale({ acceptLanguage: 'fr;q=0, ja;q=0.1', fallback: 'en' }), 'ja');
    assert.equal(negotiateLocale({ acceptLanguage: 'pt', fallback: 'en' }), 'pt-BR');
    assert.equal(negotiateLocale({ uiLocales: ['es-MX'], acceptLanguage: 'de', fallback: 'en' }), 'es');
    assert.equal(negotiateLocale({ chosen: 'ja', uiLocales: ['fr'], acceptLanguage: 'de', fallback: 'en' }), 'ja');
    assert.equal(negotiateLocale({ acceptLanguage: '*', fallback: 'fr' }), 'fr');
  });

  it('plurals by the language’s own rules: French counts 0 as one, Japanese has no plural', () => {
    assert.match(translator('fr').t('password.tooShort', { min: 0 }), /0 caractère\./);
    assert.match(translator('de').t('throttle.wait', { minutes: 1, seconds: 0 }), /in 1 Minute erneut/);
    assert.match(translator('ja').t('throttle.wait', { minutes: 0, seconds: 1 }), /1 秒後/);
  });

  it('dates and numbers in the language, the time zone named', () => {
    const at = Date.UTC(2026, 10, 26, 13, 5) / 1000;
    assert.equal(translator('de').dateTime(at), '26. November 2026 um 13:05 UTC');
    assert.match(translator('en').dateTime(at), /^November 26, 2026 at 01:05 PM UTC$/);
    assert.equal(translator('fr').number(12345.5), '12\u202f345,5');
  });
});
