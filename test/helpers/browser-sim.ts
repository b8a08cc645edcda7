// A minimal browser for HTTP-level tests: a cookie jar, manual redirects, and form submission of the
// login and consent pages.
import assert from 'node:assert/strict';

/** Text as the page wrote it in an attribute or an element (src/ui/html.ts escapes these five). */
export function unescapeHtml(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

export class BrowserSim {
  readonly cookies = new Map<string, string>();
  readonly origin: string;
  /** Headers sent with every request (a User-Agent, an Accept-Language). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(origin: string, headers: Record<string, string> = {}) {
    this.origin = origin;
    this.headers = headers;
  }

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...this.headers };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (init.form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(new URL(url, this.origin), {
      method: init.method ?? (init.form ? 'POST' : 'GET'),
      headers,
      redirect: 'manual',
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return response;
  }

  static hidden(page: string, name: string): string {
    const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(page);
    assert.ok(match, `hidden field ${name} not found`);
    return unescapeHtml(match[1]!);
  }

  async login(loginLocation: string, username: string, password: string): Promise<Response> {
    const page = await this.request(loginLocation);
    assert.equal(page.status, 200);
    const body = await page.text();
    return this.request('/login', {
      form: {
        interaction: BrowserSim.hidden(body, 'interaction'),
        csrf: BrowserSim.hidden(body, 'csrf'),
        username,
        password,
      },
    });
  }

  async consent(consentLocation: string, decision: 'allow' | 'deny'): Promise<Response> {
    const page = await this.request(consentLocation);
    assert.equal(page.status, 200);
    const body = await page.text();
    return this.request('/consent', {
      form: { interaction: BrowserSim.hidden(body, 'interaction'), csrf: BrowserSim.hidden(body, 'csrf'), decision },
    });
  }

  /**
   * Follows an authorization request through login and consent to the client's redirect URI and
   * returns that final URL.
   */
  async authorize(
    authorizationUrl: string,
    user: { username: string; password: string },
    decision: 'allow' | 'deny' = 'allow',
  ): Promise<URL> {
    let response = await this.request(authorizationUrl);
    for (let i = 0; i < 5; i++) {
      assert.ok(
        [302, 303].includes(response.status),
        `expected a redirect, got ${response.status}: ${await response.text()}`,
      );
      const location = new URL(response.headers.get('location')!, this.origin);
      if (location.origin === this.origin && location.pathname === '/login') {
        response = await this.login(location.href, user.username, user.password);
      } else if (location.origin === this.origin && location.pathname === '/consent') {
        response = await this.consent(location.href, decision);
      } else {
        return location;
      }
    }
    assert.fail('too many redirects');
  }
}
