// The pages' stylesheet, served from our origin (the CSP allows no inline styles), made once at
// start-up with the brand's primary colour (./brand.ts). Light and dark follow prefers-color-scheme.
//
// Cascade layers order it: `tessera` (ours), then `operator` (TESSERA_BRAND_STYLESHEET, imported into
// it), so the operator's rules override ours; and first `guard`, whose !important declarations win
// over every later layer's, !important or not (CSS Cascade 5 §6.4): they keep the client's name (the
// sign-in, consent and sign-out headings, `.client`) and the notice of an unreviewed client
// (`.vetting`) on the page, in readable colours, whatever the operator's stylesheet says.
import { contrast, readableOn, textOn } from './colours.ts';

const LIGHT = {
  bg: '#f4f5f7',
  card: '#ffffff',
  fg: '#1d2433',
  muted: '#565f70',
  border: '#767d8c',
  line: '#dfe3ea',
  codeBg: '#eef0f4',
  alertBg: '#fde8e8',
  alertFg: '#8a1c1c',
  secondaryBg: '#e6e9ef',
};
const DARK = {
  bg: '#111318',
  card: '#1c1f26',
  fg: '#e8eaf0',
  muted: '#aab1be',
  border: '#8a92a3',
  line: '#2e333d',
  codeBg: '#2a2e37',
  alertBg: '#3d1618',
  alertFg: '#ffcdcd',
  secondaryBg: '#2e333d',
};

type Scheme = typeof LIGHT;

function variables(scheme: Scheme, primary: string, dark: boolean): string {
  // Links and focus rings in the brand's hue, shaded until they read on the card (4.5:1).
  const link = readableOn(primary, scheme.card, dark ? '#ffffff' : '#000000');
  return `--bg:${scheme.bg};--card:${scheme.card};--fg:${scheme.fg};--muted:${scheme.muted};--border:${scheme.border};
--line:${scheme.line};--code-bg:${scheme.codeBg};--alert-bg:${scheme.alertBg};--alert-fg:${scheme.alertFg};
--secondary-bg:${scheme.secondaryBg};--secondary-fg:${scheme.fg};--primary:${primary};--on-primary:${textOn(primary)};
--link:${link};--focus:${link}`;
}

/** What keeps a text on the page: against hiding, shrinking, clipping, covering and recolouring. */
function guard(scheme: Scheme): string {
  const guarded = 'main.card h1,main.card .client,main.card .vetting';
  const within = 'main.card h1 *,main.card .client *,main.card .vetting *';
  const seen =
    'visibility:visible!important;opacity:1!important;filter:none!important;transform:none!important;' +
    'clip-path:none!important;mask:none!important;content-visibility:visible!important;' +
    'mix-blend-mode:normal!important;position:static!important';
  return `html,body,main.card{${seen};overflow:visible!important;height:auto!important;max-height:none!important}
html{display:block!important;font-size:100%!important}body{display:flex!important}main.card{display:block!important}
${guarded}{${seen};display:block!important;width:auto!important;height:auto!important;max-height:none!important;
overflow:visible!important;text-indent:0!important;letter-spacing:normal!important;text-shadow:none!important;
color:${scheme.fg}!important;background:none!important;margin-inline:0!important;min-height:0!important}
${within}{${seen};display:inline!important;font-size:inherit!important;color:inherit!important;
text-indent:0!important;letter-spacing:normal!important;text-shadow:none!important}
main.card h1{font-size:1.35rem!important}main.card .client,main.card .vetting{font-size:1rem!important}
main.card .vetting{color:${scheme.alertFg}!important;background:${scheme.alertBg}!important}
${guarded},${within}{-webkit-text-fill-color:currentColor!important}
main.card h1::before,main.card h1::after,main.card .client::before,main.card .client::after,
main.card .vetting::before,main.card .vetting::after{content:none!important}
body *,body *::before,body *::after{position:static!important}`;
}

const OURS = `
*{box-sizing:border-box}
html{color-scheme:light dark}
body{margin:0;min-height:100vh;display:flex;flex-direction:column;align-items:center;justify-content:center;
background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
header.brand{display:flex;align-items:center;gap:.6rem;margin:1.5rem 1rem 0;font-weight:600;font-size:1.1rem}
header.brand img{max-height:2.5rem;max-width:10rem;width:auto;height:auto}
main.card{background:var(--card);border-radius:12px;box-shadow:0 2px 12px rgba(0,0,0,.08);padding:2rem;width:100%;
max-width:26rem;margin:1rem;overflow-wrap:anywhere}
main.card.wide{max-width:52rem}
h1{font-size:1.35rem;margin:0 0 1rem}
h2{font-size:1.05rem;margin:1.5rem 0 .5rem}
h3{font-size:1rem;margin:0}
a{color:var(--link)}
section.grant{border-top:1px solid var(--line);padding:1rem 0}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input[type=text],input[type=password],input[type=search],textarea,select{width:100%;padding:.6rem .75rem;
border:1px solid var(--border);border-radius:8px;font:inherit;background:var(--card);color:var(--fg)}
input[aria-invalid=true]{border-color:var(--alert-fg);border-width:2px}
input:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
button{margin-top:1.25rem;padding:.6rem 1.1rem;border:0;border-radius:8px;font:inherit;font-weight:600;cursor:pointer;
background:var(--primary);color:var(--on-primary);min-height:2.75rem}
button.secondary{background:var(--secondary-bg);color:var(--secondary-fg)}
.actions{display:flex;flex-wrap:wrap;gap:.75rem}
.alert{background:var(--alert-bg);color:var(--alert-fg);border-radius:8px;padding:.6rem .75rem;margin:0 0 1rem}
ul.scopes{padding-left:1.2rem}
ul.scopes li{margin:.25rem 0}
ul.scopes li code{font-size:.8rem;color:var(--muted);background:var(--code-bg)}
code{background:var(--code-bg);border-radius:4px;padding:0 .25rem;overflow-wrap:anywhere}
pre{background:var(--code-bg);border-radius:8px;padding:.75rem;overflow:auto;font-size:.85rem}
.muted{color:var(--muted);font-size:.9rem}
[hidden]{display:none!important}
.separator{text-align:center;color:var(--muted);margin:1.25rem 0 0}
form.passkey button{width:100%;margin-top:.5rem}
section.passkey form button{margin-top:.75rem}
.qr svg{display:block;width:12rem;height:12rem;max-width:100%;background:#fff;padding:.5rem;border-radius:4px}
code.key{overflow-wrap:anywhere}
ul.codes{list-style:none;padding:0;columns:2;font-size:1.05rem}
table{width:100%;border-collapse:collapse;font-size:.95rem}
th,td{text-align:start;vertical-align:top;padding:.4rem .5rem;border-bottom:1px solid var(--line)}
nav.console ul{list-style:none;margin:0 0 1rem;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1.25rem}
nav.console a[aria-current]{font-weight:700;text-decoration:none}
fieldset{border:1px solid var(--line);border-radius:8px;margin:1rem 0 0}
fieldset label{display:inline;font-weight:400;margin:0 1rem 0 .25rem}
nav.languages{max-width:52rem;margin:0 1rem 1.5rem;font-size:.9rem}
nav.languages ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;justify-content:center;gap:.25rem 1rem}
nav.languages a{color:var(--fg);display:inline-block;padding:.25rem 0}
nav.languages a[aria-current]{font-weight:700;text-decoration:none}
`;

/** The stylesheet, for the brand's primary colour and the operator's stylesheet (its address), if any. */
export function stylesheet(input: { color: string; operatorSheet: string | null }): string {
  const primary = input.color;
  const imported = input.operatorSheet ? `@import url("${input.operatorSheet}") layer(operator);\n` : '';
  return `@layer guard, tessera, operator;
${imported}@layer tessera {
:root{${variables(LIGHT, primary, false)}}
@media (prefers-color-scheme: dark){:root{${variables(DARK, primary, true)}}}
${OURS}}
@layer guard {
${guard(LIGHT)}
@media (prefers-color-scheme: dark){${guard(DARK)}}
}
`;
}

/** The contrast of the brand's button text (for tests and the docs): at least 4.5:1 for any colour. */
export function buttonContrast(color: string): number {
  return contrast(color, textOn(color));
}
