// The mail outbox's worker of a running server (src/main.ts), by TESSERA_SMTP_URL: sent through the
// server, written to the log (development without one: said at start, links included), or none
// (production without one: nothing that needs mail is offered, said at start).
import type { Config } from '../config/index.ts';
import type { OutboxLog } from '../events/outbox.ts';
import type { MailStore } from '../store/mails.ts';
import type { Secrets } from '../tokens/secrets.ts';
import { MailDelivery } from './delivery.ts';
import { logTransport, smtpTransport } from './transport.ts';

export function startMailDelivery(
  store: Pick<MailStore, 'claimMails' | 'recordMailAttempt'>,
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
  const delivery = new MailDelivery(store, {
    secret,
    transport,
    from: mail.from,
    interval: config.webhookInterval,
    log,
  });
  delivery.start();
  return delivery;
}
