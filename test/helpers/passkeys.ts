// Passkeys over HTTP for the server-level tests: a user of the test's own, the options a page carries
// in its data-options attribute, and the forms the pages' script would post, answered by a software
// authenticator (./authenticator.ts).
import assert from 'node:assert/strict';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { newId } from '../../src/tokens/opaque.ts';
import type { SoftAuthenticator } from './authenticator.ts';
import { BrowserSim, unescapeHtml } from './browser-sim.ts';
import { PASSWORD, type TestServer } from './server.ts';

export async function newUser(server: TestServer, options: { password?: boolean } = {}) {
  const username = `user-${newId().slice(0, 8).toLowerCase()}`;
  const passwordHash = options.password === false ? null : await hashPassword(PASSWORD);
  const user = await createUser(server.store, server.config, {
    username,
    email: `${username}@example.com`,
    passwordHash,
  });
  return { id: user.id, username, password: PASSWORD };
}

/** The WebAuthn options of the page's form marked data-passkey="kind" (sign-in, confirm, register). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function pageOptions(page: string, kind: string): any {
  const match = new RegExp(`data-passkey="${kind}"[^>]*?data-options="([^"]*)"`).exec(page);
  assert.ok(match, `no data-passkey="${kind}" form with options`);
  return JSON.parse(unescapeHtml(match[1]!));
}

/** Signs `browser` in at the account's sign-in page with the password; the answer (303). */
export async function passwordSignIn(browser: BrowserSim, user: { username: string; password: string }) {
  const page = await (await browser.request('/account/login')).text();
  const form = { interaction: '', csrf: BrowserSim.hidden(page, 'csrf'), username: user.username };
  return browser.request('/account/login', { form: { ...form, password: user.password } });
}

/** Adds a passkey made by `authenticator` from the account page; the answer (303). */
export async function addPasskey(
  browser: BrowserSim,
  authenticator: SoftAuthenticator,
  options: { name?: string; answer?: (options: never) => unknown } = {},
) {
  const page = await (await browser.request('/account')).text();
  const creation = pageOptions(page, 'register');
  const response = options.answer ? options.answer(creation as never) : authenticator.register(creation);
  const form = { csrf: BrowserSim.hidden(page, 'csrf'), response: JSON.stringify(response) };
  return browser.request('/account/passkeys', { form: { ...form, ...(options.name ? { name: options.name } : {}) } });
}

/** The account's sign-in page's passkey form, answered by `answer`: the answer (303) and what was posted. */
export async function passkeySignIn(browser: BrowserSim, answer: (options: never) => unknown) {
  const page = await (await browser.request('/account/login')).text();
  const form = {
    interaction: '',
    csrf: BrowserSim.hidden(page, 'csrf'),
    response: JSON.stringify(answer(pageOptions(page, 'sign-in') as never)),
  };
  return { response: await browser.request('/login/passkey', { form }), form };
}

/** Whether `browser` is signed in (its account page shows, rather than the way to sign in). */
export async function signedIn(browser: BrowserSim): Promise<boolean> {
  const response = await browser.request('/account');
  await response.body?.cancel();
  return response.status === 200;
}
