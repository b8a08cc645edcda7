// A browser for flows that cross sites (Tessera and the upstream providers it brokers): a cookie jar
// per host name, as browsers keep them (not per port), manual redirects, and the forms of a page read
// so that a test can submit one as a person would.
import assert from 'node:assert/strict';
import { unescapeHtml } from './browser-sim.ts';

export interface Form {
  action: string;
  fields: Record<string, string>;
}

export interface Page {
  url: URL;
  status: number;
  /** A redirect's Location, resolved against the URL. */
  location: URL | undefined;
  headers: Headers;
  body: string;
  forms: Form[];
}

/** The POST forms of a page, each with its action and hidden fields. */
export function formsOf(body: string): Form[] {
  return [...body.matchAll(/<form method="post" action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)].map((m) => ({
    action: unescapeHtml(m[1]!),
    fields: Object.fromEntries(
      [...m[2]!.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((f) => [
        f[1]!,
        unescapeHtml(f[2]!),
      ]),
    ),
  }));
}

export class Browser {
  readonly #jars = new Map<string, Map<string, string>>();
  readonly #fetch: typeof fetch;

  /** `fetcher`: another fetch, e.g. undici's with an agent that trusts a test's certificate authority. */
  constructor(fetcher: typeof fetch = fetch) {
    this.#fetch = fetcher;
  }

  jar(host: string): Map<string, string> {
    let jar = this.#jars.get(host);
    if (!jar) this.#jars.set(host, (jar = new Map()));
    return jar;
  }

  /** One request, no redirect followed; the page it answered. */
  async request(url: string | URL, init: { form?: Record<string, string>; origin?: string } = {}): Promise<Page> {
    const target = new URL(url);
    const jar = this.jar(target.hostname);
    const headers: Record<string, string> = {};
    if (jar.size > 0) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers.origin = init.origin ?? target.origin;
    }
    const response = await this.#fetch(target, {
      method: init.form ? 'POST' : 'GET',
      headers,
      redirect: 'manual',
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair, ...attributes] = cookie.split(';');
      const eq = pair!.indexOf('=');
      const [name, value] = [pair!.slice(0, eq).trim(), pair!.slice(eq + 1)];
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    const body = await response.text();
    const location = response.headers.get('location');
    return {
      url: target,
      status: response.status,
      location: location === null ? undefined : new URL(location, target),
      headers: response.headers,
      body,
      forms: formsOf(body),
    };
  }

  /** Submits `form` of `page` with `more` fields added. */
  submit(page: Page, form: Form, more: Record<string, string> = {}): Promise<Page> {
    return this.request(new URL(form.action, page.url), { form: { ...form.fields, ...more }, origin: page.url.origin });
  }

  /**
   * Follows redirects from `url`, and on each page asks `act` what to submit next (a form and its
   * fields), until `act` returns undefined for a page or a redirect leaves for `stopAt`'s origin and
   * path: then that page, or the URL it was sent to.
   */
  async drive(
    url: string | URL,
    act: (page: Page) => { form: Form; fields?: Record<string, string> } | undefined,
    stopAt?: string,
  ): Promise<{ page?: Page; stoppedAt?: URL }> {
    if (stopAt && new URL(url).href.startsWith(stopAt)) return { stoppedAt: new URL(url) };
    let page = await this.request(url);
    for (let step = 0; step < 30; step++) {
      if (page.location && [301, 302, 303, 307].includes(page.status)) {
        if (stopAt && page.location.href.startsWith(stopAt)) return { stoppedAt: page.location };
        page = await this.request(page.location);
        continue;
      }
      const next = act(page);
      if (!next) return { page };
      page = await this.submit(page, next.form, next.fields);
    }
    assert.fail('too many steps');
  }
}
