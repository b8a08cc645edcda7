// The mail outbox's worker of a running server (src/main.ts), by TESSERA_SMTP_URL: sent through the
// server, written to the log (development without one: said at start, links included), or none
// (production without one: nothing that needs mail is offered, said at start); with the security
// notifications (./security.ts) unless TESSERA_SECURITY_MAIL=off.
import type { Config } from '../config/index.ts';
import type { OutboxLog } from '../events/outbox.ts';
import type { MailStore } from '../store/mails.ts';
import type { NoticeStore } from '../store/notices.ts';
import type { Secrets } from '../tokens/secrets.ts';
import { MailDelivery } from './delivery.ts';
import { SecurityNotifier } from './security.ts';
import { logTransport, smtpTransport } from './transport.ts';

export function startMailDelivery(
  store: Pick<MailStore, 'claimMails' | 'recordMailAttempt'> & NoticeStore,
  config: Config,
  secret: Secrets,
  log: OutboxLog,
): MailDelivery | undefined {
  const { mail } = config;
  if (mail.mode === 'off') {
    log.warn({}, 'mail: TESSERA_SMTP_URL is not set: password reset, invitations, verification and sign-up are off');
    return undefined;
  }
  if (mail.mode === 'log') {
    log.warn({}, 'mail: TESSERA_SMTP_URL is not set: mails are written to this log with their links (development)');
  }
  const transport = mail.smtp ? smtpTransport(mail.smtp) : logTransport(log);
  const settings = { secret, mail, issuer: config.issuer };
  const notices = mail.securityNotices
    ? new SecurityNotifier(store, settings, { defaultLocale: config.defaultLocale, log })
    : undefined;
  const delivery = new MailDelivery(store, {
    secret,
    transport,
    from: mail.from,
    interval: config.webhookInterval,
    log,
    ...(notices ? { notices } : {}),
  });
  delivery.start();
  return delivery;
}
