// Colour arithmetic for the brand's primary colour (WCAG 2.2 §1.4.3 contrast, relative luminance).

type Rgb = [number, number, number];

export function parseHex(hex: string): Rgb {
  const digits = hex.slice(1);
  const full = digits.length === 3 ? [...digits].map((d) => d + d).join('') : digits;
  return [0, 2, 4].map((i) => parseInt(full.slice(i, i + 2), 16)) as Rgb;
}

export function toHex(rgb: Rgb): string {
  return `#${rgb.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;
}

function luminance([r, g, b]: Rgb): number {
  const channel = (c: number) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

/** The contrast ratio of two colours, 1 to 21. */
export function contrast(a: string, b: string): number {
  const [l1, l2] = [luminance(parseHex(a)), luminance(parseHex(b))].sort((x, y) => y - x) as [number, number];
  return (l1 + 0.05) / (l2 + 0.05);
}

/** Black or white, whichever reads better on `background` (always at least 4.5:1). */
export function textOn(background: string): string {
  return contrast(background, '#000000') >= contrast(background, '#ffffff') ? '#000000' : '#ffffff';
}

/**
 * `colour`, or the first shade of it towards `toward` (black or white) that reaches `ratio` against
 * `background`: the brand's hue, readable.
 */
export function readableOn(colour: string, background: string, toward: string, ratio = 4.5): string {
  const from = parseHex(colour);
  const to = parseHex(toward);
  for (let step = 0; step <= 20; step++) {
    const t = step / 20;
    const shade = toHex(from.map((c, i) => c + (to[i]! - c) * t) as Rgb);
    if (contrast(shade, background) >= ratio) return shade;
  }
  return toward;
}
