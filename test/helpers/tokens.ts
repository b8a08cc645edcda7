// Shortcuts for token-endpoint tests: get a code through the simulated browser, call the endpoint.
import { createHash, randomBytes } from 'node:crypto';
import { BrowserSim } from './browser-sim.ts';
import type { TestClient, TestServer } from './server.ts';

export function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

export async function tokenRequest(
  server: TestServer,
  form: Record<string, string>,
  authorization?: string,
): Promise<Response> {
  return fetch(`${server.issuer}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
    body: new URLSearchParams(form),
  });
}

export interface IssuedCode {
  code: string;
  verifier: string | null;
  client: TestClient;
}

export async function getCode(
  server: TestServer,
  client: TestClient,
  options: {
    pkce?: boolean;
    scope?: string;
    nonce?: string;
    browser?: BrowserSim;
    extra?: Record<string, string>;
  } = {},
): Promise<IssuedCode> {
  const pkce = options.pkce ?? client.secret === null;
  const verifier = pkce ? randomBytes(32).toString('base64url') : null;
  const params = new URLSearchParams({
    client_id: client.id,
    redirect_uri: client.redirectUri,
    response_type: 'code',
    scope: options.scope ?? 'openid profile email',
    state: 's',
    ...(options.nonce ? { nonce: options.nonce } : {}),
    ...(verifier
      ? { code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' }
      : {}),
    ...options.extra,
  });
  const browser = options.browser ?? new BrowserSim(server.issuer);
  const callback = await browser.authorize(`${server.issuer}/oauth2/authorize?${params}`, server.user);
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code: ${callback.href}`);
  return { code, verifier, client };
}

/** Exchanges a code the usual way for its client kind. */
export async function exchange(
  server: TestServer,
  issued: IssuedCode,
  extra: Record<string, string> = {},
): Promise<Response> {
  const form: Record<string, string> = {
    grant_type: 'authorization_code',
    code: issued.code,
    redirect_uri: issued.client.redirectUri,
  };
  if (issued.verifier) form.code_verifier = issued.verifier;
  Object.assign(form, extra);
  if (issued.client.secret === null) return tokenRequest(server, { ...form, client_id: issued.client.id });
  return tokenRequest(server, form, basic(issued.client.id, issued.client.secret));
}

/** An access token of `user` with `scope`, through the first-party client (no consent page). */
export async function accessTokenOf(
  server: TestServer,
  user: { username: string; password: string },
  scope: string,
): Promise<string> {
  const c = server.clients.firstParty;
  const query = new URLSearchParams({ client_id: c.id, redirect_uri: c.redirectUri, response_type: 'code', scope });
  const callback = await new BrowserSim(server.issuer).authorize(`${server.issuer}/oauth2/authorize?${query}`, user);
  const form = {
    grant_type: 'authorization_code',
    code: callback.searchParams.get('code')!,
    redirect_uri: c.redirectUri,
  };
  const response = await tokenRequest(server, form, basic(c.id, c.secret!));
  return ((await response.json()) as { access_token: string }).access_token;
}
