import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { html } from '../../src/ui/html.ts';
import { translator } from '../../src/i18n/index.ts';
import { plainContext } from '../../src/ui/layout.ts';
import { consentPage, errorPage, loginPage } from '../../src/ui/pages.ts';

const ui = plainContext(translator('en'));

describe('pages', () => {
  it('escapes every interpolated value', () => {
    const page = loginPage(ui, { interaction: '"><x>', csrfToken: 't', clientName: '<script>alert(1)</script>' });
    assert.doesNotMatch(page, /<script>/);
    assert.match(page, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(page, /value="&quot;&gt;&lt;x&gt;"/);
    assert.equal(String(html`${"'&"}`), '&#39;&amp;');
  });

  it('the login form has labelled inputs, hidden fields, and an alert only on error', () => {
    const page = loginPage(ui, { interaction: 'i', csrfToken: 'c', clientName: 'App' });
    for (const id of ['username', 'password']) assert.match(page, new RegExp(`<label for="${id}">[\\s\\S]*id="${id}"`));
    assert.match(page, /name="interaction" value="i"/);
    assert.match(page, /name="csrf" value="c"/);
    assert.match(page, /<form method="post" action="\/login">/);
    assert.doesNotMatch(page, /role="alert"/);
    assert.match(
      loginPage(ui, { interaction: 'i', csrfToken: 'c', clientName: 'App', error: { key: 'login.failed' } }),
      /id="login-error" role="alert">Incorrect username or password\.</,
    );
  });

  it('the consent page names the client and describes each scope', () => {
    const page = consentPage(ui, {
      interaction: 'i',
      csrfToken: 'c',
      clientName: 'Acme <Tools>',
      username: 'alice',
      scopes: [
        { name: 'apps', description: 'Manage your apps' },
        { name: 'email', description: 'Your email address' },
      ],
    });
    assert.match(page, /Acme &lt;Tools&gt;/);
    assert.match(page, /Manage your apps <code>apps<\/code>/);
    assert.match(page, /Your email address <code>email<\/code>/);
    assert.match(page, /name="decision" value="allow"/);
    assert.match(page, /name="decision" value="deny"/);
  });

  it('the error page shows the code and description', () => {
    const page = errorPage(ui, {
      title: { key: 'error.generic.title' },
      says: { key: 'error.code.invalid_client' },
      error: 'invalid_client',
      description: 'the client is <unknown>',
    });
    assert.match(page, /<h1>Something went wrong<\/h1>/);
    assert.match(page, /role="alert">This service does not know the application/);
    assert.match(page, /<code>invalid_client<\/code>: the client is &lt;unknown&gt;/);
  });
});
