// The load generator: virtual users over one undici keep-alive pool per server, each with its own
// cookie jar, following redirects and submitting the sign-in and consent forms of either server.
import { hash, randomBytes } from 'node:crypto';
import { Pool } from 'undici';

export interface Target {
  name: string;
  origin: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

export interface Credentials {
  username: string;
  password: string;
}

interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export class Http {
  readonly pool: Pool;
  readonly origin: string;
  constructor(origin: string, connections: number) {
    this.origin = origin;
    this.pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  }
  async request(
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string> = {},
    body?: string,
  ): Promise<Response> {
    const response = await this.pool.request({ method, path, headers, ...(body !== undefined ? { body } : {}) });
    return { status: response.statusCode, headers: response.headers, body: await response.body.text() };
  }
  close(): Promise<void> {
    return this.pool.close();
  }
}

function decodeEntities(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The first form of a page: its action and the fields a person would submit. */
function parseForm(html: string, credentials: Credentials): { action: string; fields: URLSearchParams } {
  const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) throw new Error(`no form in page: ${html.slice(0, 200)}`);
  const fields = new URLSearchParams();
  for (const input of form[2]!.matchAll(/<input([^>]*)>/gi)) {
    const attrs = input[1]!;
    const name = /name="([^"]*)"/.exec(attrs)?.[1];
    if (!name) continue;
    const value = decodeEntities(/value="([^"]*)"/.exec(attrs)?.[1] ?? '');
    if (/type="password"/.test(attrs)) fields.set(name, credentials.password);
    else if (name === 'username' || name === 'login') fields.set(name, credentials.username);
    else fields.set(name, value);
  }
  const allow = /<button[^>]*name="([^"]*)"[^>]*value="(allow)"/i.exec(form[2]!);
  if (allow) fields.set(allow[1]!, allow[2]!);
  return { action: decodeEntities(form[1]!), fields };
}

export class VirtualUser {
  readonly http: Http;
  readonly target: Target;
  readonly credentials: Credentials;
  cookies = new Map<string, string>();
  refreshToken = '';
  accessToken = '';

  constructor(http: Http, target: Target, credentials: Credentials) {
    this.http = http;
    this.target = target;
    this.credentials = credentials;
  }

  #headers(extra: Record<string, string> = {}): Record<string, string> {
    const headers: Record<string, string> = { ...extra };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    return headers;
  }

  #keepCookies(response: Response): void {
    const setCookie = response.headers['set-cookie'];
    for (const cookie of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const pair = cookie.split(';')[0]!;
      const eq = pair.indexOf('=');
      const [name, value] = [pair.slice(0, eq), pair.slice(eq + 1)];
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async #send(method: 'GET' | 'POST', url: string, body?: URLSearchParams): Promise<Response> {
    const path = url.startsWith('http') ? new URL(url).pathname + new URL(url).search : url;
    const headers = this.#headers(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {});
    const response = await this.http.request(method, path, headers, body?.toString());
    this.#keepCookies(response);
    return response;
  }

  /** Authorization request → (pages) → the code; fails on anything unexpected. */
  async authorize(scope: string, prompt?: string): Promise<{ code: string; verifier: string }> {
    const verifier = randomBytes(32).toString('base64url');
    const params = new URLSearchParams({
      client_id: this.target.clientId,
      redirect_uri: this.target.redirectUri,
      response_type: 'code',
      scope,
      state: randomBytes(8).toString('hex'),
      code_challenge: hash('sha256', verifier, 'base64url'),
      code_challenge_method: 'S256',
      ...(prompt ? { prompt } : {}),
    });
    let response = await this.#send('GET', `/oauth2/authorize?${params}`);
    for (let step = 0; step < 12; step++) {
      if (response.status >= 300 && response.status < 400) {
        const location = String(response.headers.location);
        if (location.startsWith(this.target.redirectUri)) {
          const code = new URL(location).searchParams.get('code');
          if (!code) throw new Error(`no code: ${location}`);
          return { code, verifier };
        }
        response = await this.#send('GET', location);
      } else if (response.status === 200) {
        const { action, fields } = parseForm(response.body, this.credentials);
        response = await this.#send('POST', action, fields);
      } else {
        throw new Error(`authorization failed with ${response.status}: ${response.body.slice(0, 200)}`);
      }
    }
    throw new Error('too many steps');
  }

  #basic(): string {
    return `Basic ${Buffer.from(`${encodeURIComponent(this.target.clientId)}:${encodeURIComponent(this.target.clientSecret)}`).toString('base64')}`;
  }

  async token(form: Record<string, string>): Promise<Record<string, string>> {
    const response = await this.http.request(
      'POST',
      '/oauth2/token',
      { 'content-type': 'application/x-www-form-urlencoded', authorization: this.#basic() },
      new URLSearchParams(form).toString(),
    );
    if (response.status !== 200) throw new Error(`token request failed with ${response.status}: ${response.body}`);
    const tokens = JSON.parse(response.body) as Record<string, string>;
    if (tokens.refresh_token) this.refreshToken = tokens.refresh_token;
    if (tokens.access_token) this.accessToken = tokens.access_token;
    return tokens;
  }

  async exchange(code: string, verifier: string): Promise<void> {
    const tokens = await this.token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: this.target.redirectUri,
      code_verifier: verifier,
    });
    if (!tokens.access_token || !tokens.refresh_token) throw new Error('incomplete token response');
  }

  async refresh(): Promise<void> {
    await this.token({ grant_type: 'refresh_token', refresh_token: this.refreshToken });
  }

  async userinfo(): Promise<void> {
    const response = await this.http.request('GET', '/oauth2/userinfo', {
      authorization: `Bearer ${this.accessToken}`,
    });
    if (response.status !== 200) throw new Error(`userinfo failed with ${response.status}: ${response.body}`);
  }
}

export interface Measurement {
  completed: number;
  errors: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  firstError?: string;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs `iteration` on every user in a loop for `seconds`; latencies in milliseconds. */
export async function drive(
  users: VirtualUser[],
  seconds: number,
  iteration: (user: VirtualUser) => Promise<void>,
): Promise<Measurement> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    users.map(async (user) => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          await iteration(user);
          latencies.push(performance.now() - t0);
        } catch (err) {
          errors++;
          firstError ??= (err as Error).message;
        }
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    completed: latencies.length,
    errors,
    seconds: elapsed,
    perSecond: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    ...(firstError ? { firstError } : {}),
  };
}
