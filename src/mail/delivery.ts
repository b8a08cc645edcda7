// Sending mails from the outbox (`mails`, written in the same transaction as what causes each:
// src/store/mails.ts) on the outbox worker webhooks share (../events/outbox.ts): claimed for a lease
// (on PostgreSQL FOR UPDATE SKIP LOCKED), so that each attempt is made by one instance; retried with
// the same backoff while the SMTP server is away; surviving a crash (the lease runs out and the mail
// is due again). Once sent or given up, its message (with the link) is erased. The log names a mail
// by its id and kind, never its link. Each look first writes the security notifications due (./security.ts).
import { outboxOutcome, OutboxWorker, type OutboxWorkerOptions } from '../events/outbox.ts';
import type { Mail, MailStore } from '../store/mails.ts';
import type { Secrets } from '../tokens/secrets.ts';
import { openMessage } from './compose.ts';
import type { MailTransport } from './transport.ts';

/** Mails sent at once by one instance. */
const CONCURRENT = 4;

export interface MailDeliveryOptions extends OutboxWorkerOptions {
  secret: Secrets;
  transport: MailTransport;
  from: string;
  /** Writes the security notifications due (./security.ts) before each look takes the mails due. */
  notices?: { runOnce(now: number): Promise<number> };
}

export class MailDelivery extends OutboxWorker<Mail> {
  readonly #store: Pick<MailStore, 'claimMails' | 'recordMailAttempt'>;
  readonly #options: MailDeliveryOptions;

  constructor(store: Pick<MailStore, 'claimMails' | 'recordMailAttempt'>, options: MailDeliveryOptions) {
    super('mail', options);
    this.#store = store;
    this.#options = options;
  }

  override async stop(): Promise<void> {
    await super.stop();
    this.#options.transport.close();
  }

  protected capacity(): number {
    return CONCURRENT - this.inFlight;
  }

  protected async claim(now: number, lease: number, limit: number): Promise<Mail[]> {
    await this.#options.notices?.runOnce(now);
    return this.#store.claimMails(now, lease, limit);
  }

  protected async attempt(mail: Mail): Promise<void> {
    const log = this.log;
    const attempt = mail.attempts + 1;
    const message = mail.messageEnc === null ? undefined : openMessage(this.#options.secret, mail.messageEnc);
    let error: string | null = null;
    if (!message) {
      error = 'the message cannot be decrypted with TESSERA_SECRET or TESSERA_SECRET_PREVIOUS';
    } else {
      try {
        await this.#options.transport.send({ ...message, from: this.#options.from, to: mail.recipient });
      } catch (err) {
        // The server's answer, never the message.
        error = ((err as Error).message || 'the mail server refused the mail').slice(0, 500);
      }
    }
    const at = this.now();
    const outcome = message
      ? outboxOutcome('sent', { attempt, retryBase: mail.retryBase, at, succeeded: error === null })
      : ({ status: 'failed' } as const);
    await this.#store.recordMailAttempt(mail.id, { attempt, at, error }, outcome);
    const fields = { mail: mail.id, kind: mail.kind, attempt };
    if ('nextAttemptAt' in outcome)
      log.info({ ...fields, error, retryAt: outcome.nextAttemptAt }, 'mail will be tried again');
    else if (outcome.status === 'sent') log.info(fields, 'mail sent');
    else log.warn({ ...fields, error }, 'mail given up');
  }
}
