// Tessera's signed-out page after RP-initiated logout with front-channel logout (src/ui/pages.ts),
// served as /assets/frontchannel-logout.js: once every client's page in its hidden iframes has loaded,
// or after 5 seconds whatever they do, it goes on to the address of the page's "Continue" link (the
// client's post_logout_redirect_uri). Without JavaScript the person follows the link.
'use strict';
(() => {
  const next = document.querySelector('a[data-continue]');
  if (!next) return;
  const frames = [...document.querySelectorAll('iframe[data-frontchannel-logout]')];
  let waiting = frames.length;
  const go = () => window.location.replace(next.href);
  const timer = setTimeout(go, 5000);
  const loaded = () => {
    waiting -= 1;
    if (waiting > 0) return;
    clearTimeout(timer);
    go();
  };
  for (const frame of frames) frame.addEventListener('load', loaded, { once: true });
})();
