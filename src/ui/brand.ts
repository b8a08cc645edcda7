// The operator's brand (TESSERA_BRAND_*): its name, its logo and stylesheet read once at start-up and
// served from our own origin (the pages' CSP allows no other), under addresses named by their
// content's hash so browsers may keep them for a year, and the primary colour the stylesheet is made
// with (./styles.ts).
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { ConfigError } from '../config/index.ts';
import { stylesheet } from './styles.ts';

const LOGO_MAX = 512 * 1024;
const STYLESHEET_MAX = 256 * 1024;

/** A file served under /assets/: its content, type and the headers that go with it. */
export interface Asset {
  path: string;
  body: Buffer | string;
  type: string;
  /** Kept a year: the address changes with the content. */
  immutable: boolean;
  /** Headers of its own (an SVG's: no script, whatever it holds). */
  headers?: Record<string, string>;
}

/** What the pages show of the brand. */
export interface Brand {
  name: string;
  /** The logo's address, or null when there is none. */
  logo: string | null;
  /** The address of the pages' stylesheet (ours, with the operator's imported into it). */
  stylesheet: string;
}

export const DEFAULT_BRAND: Brand = { name: 'Tessera', logo: null, stylesheet: '/assets/tessera.css' };

const hashOf = (body: Buffer | string) => createHash('sha256').update(body).digest('base64url').slice(0, 12);

/** The type of an image by its first bytes (never by its name): PNG, JPEG, GIF, WebP or SVG. */
export function imageType(body: Buffer): { type: string; ext: string } | undefined {
  const head = body.subarray(0, 12);
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return { type: 'image/png', ext: 'png' };
  }
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return { type: 'image/jpeg', ext: 'jpg' };
  if (head.subarray(0, 6).toString('latin1') === 'GIF87a' || head.subarray(0, 6).toString('latin1') === 'GIF89a') {
    return { type: 'image/gif', ext: 'gif' };
  }
  if (head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP') {
    return { type: 'image/webp', ext: 'webp' };
  }
  const text = body
    .subarray(0, 1024)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i.test(text)) {
    return { type: 'image/svg+xml', ext: 'svg' };
  }
  return undefined;
}

function readLimited(setting: string, file: string, max: number): Buffer {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (err) {
    throw new ConfigError(`${setting}: cannot read ${file}: ${(err as Error).message}`);
  }
  if (size > max) throw new ConfigError(`${setting}: ${file} is ${size} bytes; at most ${max}`);
  return readFileSync(file);
}

/** The brand and the files it serves, from the settings; a file that is missing or wrong stops the start. */
export function loadBrand(settings: { name: string; logo: string | null; color: string; stylesheet: string | null }): {
  brand: Brand;
  assets: Asset[];
} {
  const assets: Asset[] = [];
  let logo: string | null = null;
  if (settings.logo) {
    const body = readLimited('TESSERA_BRAND_LOGO', settings.logo, LOGO_MAX);
    const kind = imageType(body);
    if (!kind) throw new ConfigError(`TESSERA_BRAND_LOGO: ${settings.logo} is not a PNG, JPEG, GIF, WebP or SVG image`);
    logo = `/assets/brand/logo-${hashOf(body)}.${kind.ext}`;
    // An SVG opened on its own runs no script and loads nothing: it is only ever a picture.
    const svg = { 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox" };
    assets.push({
      path: logo,
      body,
      type: kind.type,
      immutable: true,
      ...(kind.ext === 'svg' ? { headers: svg } : {}),
    });
  }
  let operatorSheet: string | null = null;
  if (settings.stylesheet) {
    const body = readLimited('TESSERA_BRAND_STYLESHEET', settings.stylesheet, STYLESHEET_MAX).toString('utf8');
    operatorSheet = `/assets/brand/style-${hashOf(body)}.css`;
    assets.push({ path: operatorSheet, body, type: 'text/css; charset=utf-8', immutable: true });
  }
  const css = stylesheet({ color: settings.color, operatorSheet });
  const sheet = `/assets/tessera-${hashOf(css)}.css`;
  assets.push({ path: sheet, body: css, type: 'text/css; charset=utf-8', immutable: true });
  // The unversioned address stays for what links it (the demo page), kept an hour.
  assets.push({ path: '/assets/tessera.css', body: css, type: 'text/css; charset=utf-8', immutable: false });
  return { brand: { name: settings.name, logo, stylesheet: sheet }, assets };
}
