// Tessera's passkey forms (src/ui/passkeys.ts), served as /assets/passkeys.js: each form marked
// `data-passkey` makes its WebAuthn call through @simplewebauthn/browser (/assets/simplewebauthn-browser.js,
// loaded before this file), puts the browser's answer in the form's `response` field as JSON and
// submits the form; the server checks everything. The forms are hidden until this script finds a
// browser that can use passkeys, so without it they are not there and the pages work as before.
'use strict';

(() => {
  const webauthn = window.SimpleWebAuthnBrowser;
  if (!webauthn || !webauthn.browserSupportsWebAuthn()) return;

  /**
   * What to tell the user when the browser's own prompt failed: which of the status element's texts
   * (in the page's language, src/ui/passkeys.ts) says it.
   */
  function explain(error) {
    switch (error && error.name) {
      case 'AbortError':
        // Another prompt replaced this one (the button, after the username field's autofill).
        return '';
      case 'NotAllowedError':
        return 'closed';
      case 'InvalidStateError':
        return 'exists';
      case 'SecurityError':
        return 'refused';
      default:
        return 'failed';
    }
  }

  function say(form, which) {
    const status = form.querySelector('[data-passkey-status]');
    if (!status) return;
    status.textContent = which === '' ? '' : status.dataset[which] || '';
    status.hidden = which === '';
  }

  async function ceremony(form, call) {
    let response;
    try {
      response = await call();
    } catch (error) {
      say(form, explain(error));
      return;
    }
    form.elements.namedItem('response').value = JSON.stringify(response);
    form.submit();
  }

  for (const fallback of document.querySelectorAll('[data-passkey-fallback]')) fallback.hidden = true;

  for (const form of document.querySelectorAll('form[data-passkey]')) {
    const optionsJSON = JSON.parse(form.dataset.options);
    const register = form.dataset.passkey === 'register';
    form.hidden = false;
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      say(form, '');
      ceremony(form, () =>
        register ? webauthn.startRegistration({ optionsJSON }) : webauthn.startAuthentication({ optionsJSON }),
      );
    });
    // Conditional mediation: the browser offers the site's passkeys in the username field's autofill
    // (autocomplete="username webauthn"); choosing one signs in.
    if (form.dataset.autofill === 'true') {
      webauthn.browserSupportsWebAuthnAutofill().then((supported) => {
        if (supported) ceremony(form, () => webauthn.startAuthentication({ optionsJSON, useBrowserAutofill: true }));
      });
    }
  }
})();
