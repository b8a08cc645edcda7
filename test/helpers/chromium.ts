// Debian's Chromium for the real-browser tests, with the flags this machine needs (no sandbox as
// root, no background networking on a closed network). Under CI its absence is a failure.
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
export const chromiumAvailable = existsSync(CHROMIUM);
if (!chromiumAvailable && process.env.CI === 'true') {
  throw new Error(`${CHROMIUM} is required under CI (.ci/run installs it)`);
}
/** The `skip` of a test that needs Chromium. */
export const needsChromium = !chromiumAvailable && `${CHROMIUM} not installed`;
