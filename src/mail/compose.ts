// A mail for the outbox: its message composed (./messages.ts) and encrypted under TESSERA_SECRET, to
// be written in the same write as what causes it (src/store/mails.ts). The message, with its link,
// is kept encrypted only until it is sent.
import type { Translator } from '../i18n/index.ts';
import type { Mail, MailKind } from '../store/mails.ts';
import { newOutboxEntry } from '../store/outbox.ts';
import { decryptAtRest, encryptAtRest } from '../tokens/at-rest.ts';
import { newSortableId } from '../tokens/opaque.ts';
import type { Secrets } from '../tokens/secrets.ts';
import { composeMessage, type MailText, type Message } from './messages.ts';

export interface MailDeps {
  secret: Secrets;
  /** The mail's language: the request's (the page the person was on), or TESSERA_DEFAULT_LOCALE. */
  t: Translator;
  /** Config.mail: its mode, what mails call the service, whether security notifications are sent. */
  mail: { mode: 'smtp' | 'log' | 'off'; productName: string; color?: string; securityNotices: boolean };
  issuer: string;
}

/** What the server knows of mail at start: MailDeps but the language, which each request chooses. */
export type MailSettings = Omit<MailDeps, 't'>;

/** Whether anything that needs mail is offered at all (production without TESSERA_SMTP_URL: no). */
export function mailAvailable(deps: Pick<MailDeps, 'mail'>): boolean {
  return deps.mail.mode !== 'off';
}

/** The outbox's row of a mail of `kind` to `to`, linking to `path` on the issuer, due at once. */
export function composeMail(
  deps: MailDeps,
  input: { kind: MailText; to: string; userId: string | null; path: string },
  now: number,
): Mail {
  const link = `${deps.issuer}${input.path}`;
  const message = composeMessage(deps.t, input.kind, deps.mail.productName, link, deps.mail.color);
  return outboxMail(deps, { ...input, message }, now);
}

/** The outbox's row of `message` to `to`, due at once, under `id` when given (a new one otherwise). */
export function outboxMail(
  deps: Pick<MailDeps, 'secret'>,
  input: { kind: MailKind; to: string; userId: string | null; message: Message; id?: string },
  now: number,
): Mail {
  return {
    id: input.id ?? newSortableId(),
    kind: input.kind,
    userId: input.userId,
    recipient: input.to,
    messageEnc: encryptAtRest(deps.secret, 'mailMessage', JSON.stringify(input.message)),
    ...newOutboxEntry(now),
  };
}

/** The message of a mail waiting to be sent; undefined when no secret of the keyring opens it. */
export function openMessage(secret: Secrets, messageEnc: string): Message | undefined {
  const opened = decryptAtRest(secret, 'mailMessage', messageEnc);
  return opened && (JSON.parse(opened.plaintext) as Message);
}
