// The pages' stylesheet, served at /assets/tessera.css (the CSP allows no inline styles).
export const STYLES = `
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;flex-direction:column;align-items:center;justify-content:center;
background:#f4f5f7;color:#1d2433;
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main.card{background:#fff;border-radius:12px;box-shadow:0 2px 12px rgba(0,0,0,.08);padding:2rem;width:100%;
max-width:26rem;margin:1rem}
main.card.wide{max-width:52rem}
h1{font-size:1.35rem;margin:0 0 1rem}
h2{font-size:1.05rem;margin:1.5rem 0 .5rem}
h3{font-size:1rem;margin:0}
section.grant{border-top:1px solid #e6e9ef;padding:1rem 0}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input[type=text],input[type=password]{width:100%;padding:.6rem .75rem;border:1px solid #c4c9d4;border-radius:8px;
font:inherit}
input:focus,button:focus{outline:3px solid #8fb3ff;outline-offset:1px}
button{margin-top:1.25rem;padding:.6rem 1.1rem;border:0;border-radius:8px;font:inherit;font-weight:600;cursor:pointer;
background:#2f5bea;color:#fff}
button.secondary{background:#e6e9ef;color:#1d2433}
.actions{display:flex;gap:.75rem}
.alert{background:#fde8e8;color:#8a1c1c;border-radius:8px;padding:.6rem .75rem;margin:0 0 1rem}
ul.scopes{padding-left:1.2rem}
ul.scopes code,p code{background:#f0f2f5;border-radius:4px;padding:0 .25rem}
pre{background:#f0f2f5;border-radius:8px;padding:.75rem;overflow:auto;font-size:.85rem}
.muted{color:#5b6475;font-size:.9rem}
[hidden]{display:none!important}
.separator{text-align:center;color:#5b6475;margin:1.25rem 0 0}
form.passkey button{width:100%;margin-top:.5rem}
nav.languages{max-width:52rem;margin:0 1rem 1rem;font-size:.9rem}
nav.languages ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;justify-content:center;gap:.25rem 1rem}
nav.languages a{color:#1d2433}
nav.languages a[aria-current]{font-weight:600;text-decoration:none}
section.passkey h3{overflow-wrap:anywhere}
section.passkey form button{margin-top:.75rem}
.qr svg{display:block;width:12rem;height:12rem;max-width:100%}
code.key{overflow-wrap:anywhere}
ul.codes{list-style:none;padding:0;columns:2;font-size:1.05rem}
`;
