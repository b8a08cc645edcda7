import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from './test/helpers/chromium.ts';
import { startServer } from './test/helpers/server.ts';

const server = await startServer({ host: 'localhost' });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on('console', (m) => console.log('console:', m.text()));
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  await page.goto(`${server.issuer}/account/login`);
  console.log('button visible', await page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible());
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password').fill(server.user.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL('**/account');
  await page.getByLabel('Name of the new passkey (optional)').fill('Laptop');
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.waitForURL('**/account?passkey=**');
  console.log(page.url(), (await page.textContent('#passkeys ~ p'))?.slice(0, 100));
  console.log(await cdp.send('WebAuthn.getCredentials', { authenticatorId }));
  // new context? sign out, go to login
  await context.clearCookies();
  await page.goto(`${server.issuer}/account/login`);
  await page.waitForTimeout(3000);
  console.log('after autofill wait:', page.url());
} finally {
  await browser.close();
  await server.close();
}
