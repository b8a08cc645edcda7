// The operator's brand: files read once and served from our origin with their type and a year's
// cache under addresses named by their content; a primary colour validated and made readable.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/index.ts';
import { imageType, loadBrand } from '../../src/ui/brand.ts';
import { contrast, readableOn, textOn } from '../../src/ui/colours.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const SVG =
  '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>';

describe('branding', () => {
  let dir: string;
  let server: TestServer;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-brand-'));
    await writeFile(join(dir, 'logo.svg'), SVG);
    await writeFile(join(dir, 'logo.png'), PNG);
    await writeFile(join(dir, 'not-an-image.png'), 'hello');
    await writeFile(join(dir, 'brand.css'), 'body { font-family: serif; }');
    server = await startServer({
      env: {
        TESSERA_BRAND_NAME: 'Example & Co',
        TESSERA_BRAND_LOGO: join(dir, 'logo.svg'),
        TESSERA_BRAND_COLOR: '#FFCC00',
        TESSERA_BRAND_STYLESHEET: join(dir, 'brand.css'),
      },
    });
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('every page names the brand, shows the logo and links the stylesheet, all from our origin', async () => {
    const page = await (await fetch(`${server.issuer}/logout/done`)).text();
    assert.match(page, /<title>Signed out – Example &amp; Co<\/title>/);
    const logo =
      /<header class="brand"><img src="(\/assets\/brand\/logo-[\w-]+\.svg)" alt=""><span>Example &amp; Co<\/span><\/header>/.exec(
        page,
      );
    assert.ok(logo, page);
    const sheet = /<link rel="stylesheet" href="(\/assets\/tessera-[\w-]+\.css)">/.exec(page)![1]!;
    const svg = await fetch(`${server.issuer}${logo[1]}`);
    assert.equal(svg.headers.get('content-type'), 'image/svg+xml');
    assert.equal(svg.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(svg.headers.get('x-content-type-options'), 'nosniff');
    assert.match(svg.headers.get('content-security-policy')!, /sandbox/);
    assert.equal(await svg.text(), SVG);
    const css = await (await fetch(`${server.issuer}${sheet}`)).text();
    const imported = /@import url\("(\/assets\/brand\/style-[\w-]+\.css)"\) layer\(operator\);/.exec(css)![1]!;
    assert.match(css, /^@layer guard, tessera, operator;/);
    assert.match(css, /--primary:#ffcc00;--on-primary:#000000;/);
    const operator = await fetch(`${server.issuer}${imported}`);
    assert.equal(operator.headers.get('content-type'), 'text/css; charset=utf-8');
    assert.equal(await operator.text(), 'body { font-family: serif; }');
    assert.equal(
      (await fetch(`${server.issuer}/assets/tessera.css`)).headers.get('cache-control'),
      'public, max-age=3600',
    );
  });

  it('a logo is known by its bytes; a wrong file or colour stops the start with its reason', async () => {
    assert.deepEqual(imageType(PNG), { type: 'image/png', ext: 'png' });
    assert.equal(imageType(Buffer.from('hello')), undefined);
    const settings = { name: 'X', color: '#123456', stylesheet: null };
    assert.match(
      loadBrand({ ...settings, logo: join(dir, 'logo.png') }).brand.logo!,
      /^\/assets\/brand\/logo-[\w-]+\.png$/,
    );
    assert.throws(
      () => loadBrand({ ...settings, logo: join(dir, 'not-an-image.png') }),
      /TESSERA_BRAND_LOGO: .* is not a PNG/,
    );
    assert.throws(() => loadBrand({ ...settings, logo: join(dir, 'missing.png') }), /TESSERA_BRAND_LOGO: cannot read/);
    for (const color of ['blue', '#12345', 'rgb(0,0,0)', '#ggg']) {
      assert.throws(() => loadConfig({ NODE_ENV: 'test', TESSERA_BRAND_COLOR: color }), /TESSERA_BRAND_COLOR/);
    }
    assert.equal(loadConfig({ NODE_ENV: 'test', TESSERA_BRAND_COLOR: '#ABC' }).brand.color, '#abc');
  });

  it('any primary colour gives readable buttons and links, light and dark', () => {
    for (let i = 0; i < 4096; i += 37) {
      const color = `#${i.toString(16).padStart(3, '0')}`;
      assert.ok(contrast(color, textOn(color)) >= 4.5, color);
      assert.ok(contrast(readableOn(color, '#ffffff', '#000000'), '#ffffff') >= 4.5, color);
      assert.ok(contrast(readableOn(color, '#1c1f26', '#ffffff'), '#1c1f26') >= 4.5, color);
    }
  });
});
