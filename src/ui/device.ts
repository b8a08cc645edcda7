// A browser and system in words ("Chrome on Linux") from a User-Agent, by bowser's parser: the account
// page's recent sign-ins and the security notifications (src/mail/security.ts) name them alike.
import Bowser from 'bowser';
import type { Translator } from '../i18n/index.ts';

export function deviceName(ui: { t: Translator }, userAgent: string): string {
  const { t } = ui;
  const parsed = userAgent ? Bowser.parse(userAgent) : undefined;
  const browser = parsed?.browser.name || undefined;
  const os = parsed?.os.name || undefined;
  if (browser && os) return t.t('account.device', { browser, os });
  return browser ?? os ?? t.t('account.unknownDevice');
}
