// How a mail leaves: through the SMTP server of TESSERA_SMTP_URL with nodemailer (smtp:// must
// upgrade with STARTTLS, smtps:// speaks TLS from the start; certificates are always checked; plain
// SMTP only to a relay on this machine, ../config/smtp-url.ts), or, in development without one, into the
// log, link included, so that a developer can follow it.
import nodemailer from 'nodemailer';
import { parseSmtpUrl } from '../config/smtp-url.ts';
import type { Message } from './messages.ts';

export interface Envelope extends Message {
  from: string;
  to: string;
}

export interface MailTransport {
  /** Sends the mail; throws when the server did not take it. */
  send(mail: Envelope): Promise<void>;
  /** Connects, greets, starts TLS and signs in, and sends nothing (`tessera check`); throws why not. */
  verify(): Promise<void>;
  close(): void;
}

export interface SmtpOptions {
  url: string;
  password: string | null;
  /** Extra certificate authorities to trust (tests; production uses NODE_EXTRA_CA_CERTS). */
  ca?: string;
  /** Milliseconds each phase (connecting, greeting, each command) may take. */
  timeoutMs?: number;
}

export function smtpTransport(options: SmtpOptions): MailTransport {
  const endpoint = parseSmtpUrl(options.url);
  const pass = endpoint.password ?? options.password;
  const timeout = options.timeoutMs ?? 10_000;
  const transporter = nodemailer.createTransport({
    host: endpoint.host,
    port: endpoint.port,
    secure: endpoint.tls === 'implicit',
    // smtp://: the connection is upgraded with STARTTLS or not used: no link goes out in clear. Only a
    // relay on this machine, named so in the URL, is spoken to in plain SMTP (../config/smtp-url.ts).
    requireTLS: endpoint.tls === 'starttls',
    ignoreTLS: endpoint.tls === 'none',
    ...(endpoint.user || pass ? { auth: { user: endpoint.user, pass: pass ?? '' } } : {}),
    ...(options.ca ? { tls: { ca: options.ca } } : {}),
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    async send(mail) {
      await transporter.sendMail({
        from: mail.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
      });
    },
    async verify() {
      await transporter.verify();
    },
    close: () => transporter.close(),
  };
}

/** Development without an SMTP server: each mail in the log, with its link (said at start). */
export function logTransport(log: { warn(obj: object, msg: string): void }): MailTransport {
  return {
    async send(mail) {
      log.warn({ mail: { to: mail.to, subject: mail.subject, text: mail.text } }, 'mail (development: not sent)');
    },
    async verify() {},
    close() {},
  };
}
