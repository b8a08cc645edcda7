// axe-core on a page of a browser context without JavaScript: the page as the browser has it (a
// form's answer included) is served at its own address to a page of a context with JavaScript, and
// checked there for WCAG A/AA violations.
import assert from 'node:assert/strict';
import AxeBuilder from '@axe-core/playwright';
import type { BrowserContext, Page } from 'playwright-core';

const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/** Fails when axe-core finds a violation on `page`; `checking` is a context with JavaScript. */
export async function axeClean(checking: BrowserContext, page: Page): Promise<void> {
  const [body, url] = [await page.content(), page.url()];
  const checker = await checking.newPage();
  try {
    await checker.route(url, (route) => route.fulfill({ body, contentType: 'text/html; charset=utf-8' }));
    await checker.goto(url);
    const results = await new AxeBuilder({ page: checker }).withTags(WCAG).analyze();
    const found = results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    assert.deepEqual(found, [], `${url}: axe-core`);
  } finally {
    await checker.close();
  }
}
