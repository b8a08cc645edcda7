// Security notifications (issue 39): a person is told by mail of each change to how their account is
// signed in to — what happened, when, from which browser and address, and what to do if it was not
// them — in the language of the page it was done on, with the operator's brand. NOTICES below is the
// one map from the audit trail's events (src/events) to these mails.
//
// They are written by a consumer of the recorded events, not by the actions: every instance's mail
// worker (./delivery.ts), at each look at the outbox, finds the events of the last WINDOW seconds that
// NOTICES names and that have no mail yet, and writes each one's mail under the event's own id, an
// insert that does nothing when another instance wrote it first (src/store/notices.ts). So an action
// needs no change to tell anyone and its request waits for nothing; a process that dies after an
// action committed loses no mail (the next look of any instance finds the event); and N instances
// write each mail once. Only a verified address is told (as GitHub tells the primary verified one):
// an unverified address may be someone else's (an upstream provider's unchecked claim), who must not
// learn of this account's sign-ins. A user with no address is told nothing.
import { CLI, type SecurityEvent } from '../events/index.ts';
import type { OutboxLog } from '../events/outbox.ts';
import { isLocale, type Locale, translator, type Translator } from '../i18n/index.ts';
import type { Mail } from '../store/mails.ts';
import type { NoticeRule, NoticeStore } from '../store/notices.ts';
import { deviceName } from '../ui/device.ts';
import { outboxMail, type MailDeps, type MailSettings } from './compose.ts';
import { composeNotice, type NoticeWords } from './notice.ts';

export type NoticeKind =
  'linked' | 'passkey' | 'totp' | 'recoveryCodes' | 'recoveryCodeUsed' | 'password' | 'email' | 'passkeySuspended';

/** Which events tell the person, and as what. The `data` fragments are the events' JSON, as written. */
const NOTICES: ReadonlyArray<{ rule: NoticeRule; kind: NoticeKind }> = [
  // A provider linked to an existing account (not the account made by a first sign-in through it).
  { rule: { type: 'user.upstream_linked', dataLacks: '"by":"first_sign_in"' }, kind: 'linked' },
  { rule: { type: 'passkey.added' }, kind: 'passkey' },
  { rule: { type: 'mfa.enrolled', dataHas: '"method":"totp"' }, kind: 'totp' },
  { rule: { type: 'recovery_codes.created' }, kind: 'recoveryCodes' },
  { rule: { type: 'recovery_code.used' }, kind: 'recoveryCodeUsed' },
  { rule: { type: 'user.password_changed' }, kind: 'password' },
  { rule: { type: 'user.password_reset' }, kind: 'password' },
  // A new address confirmed (told here, at the new address; the old one in the same write, ../account/email.ts).
  { rule: { type: 'user.email_verified', dataHas: '"changed":true' }, kind: 'email' },
  // A passkey whose signature counter went backwards (a copied authenticator), data { id, name }.
  { rule: { type: 'passkey.suspended' }, kind: 'passkeySuspended' },
];

/** Each notice's texts, named literally (the catalogue test finds them so). */
const WORDS: Record<NoticeKind, NoticeWords> = {
  linked: { subject: 'mail.security.linked.subject', intro: 'mail.security.linked.intro' },
  passkey: { subject: 'mail.security.passkey.subject', intro: 'mail.security.passkey.intro' },
  totp: { subject: 'mail.security.totp.subject', intro: 'mail.security.totp.intro' },
  recoveryCodes: { subject: 'mail.security.recoveryCodes.subject', intro: 'mail.security.recoveryCodes.intro' },
  recoveryCodeUsed: {
    subject: 'mail.security.recoveryCodeUsed.subject',
    intro: 'mail.security.recoveryCodeUsed.intro',
  },
  password: { subject: 'mail.security.password.subject', intro: 'mail.security.password.intro' },
  email: { subject: 'mail.security.email.subject', intro: 'mail.security.email.intro' },
  passkeySuspended: {
    subject: 'mail.security.passkeySuspended.subject',
    intro: 'mail.security.passkeySuspended.intro',
    yours: 'mail.security.passkeySuspended.yours',
  },
};

/** Seconds back an instance looks for events not yet told: past an outage of every instance this long, none is. */
export const WINDOW = 3600;
/** Events told at one look, at most. */
const BATCH = 100;

/** The notice an event gives, if any: the first of NOTICES whose rule it meets. */
export function noticeKind(event: Pick<SecurityEvent, 'type' | 'data'>): NoticeKind | undefined {
  const data = event.data === null ? '' : JSON.stringify(event.data);
  const meets = (rule: NoticeRule) =>
    rule.type === event.type &&
    (rule.dataHas === undefined || data.includes(rule.dataHas)) &&
    (rule.dataLacks === undefined || !data.includes(rule.dataLacks));
  return NOTICES.find((notice) => meets(notice.rule))?.kind;
}

/** Where the event came from, in words: the browser and system, or the operator's command line. */
function source(t: Translator, event: SecurityEvent): { device: string; address: string } {
  const cli = event.userAgent === CLI.userAgent && event.ip === null;
  return {
    device: cli ? t.t('mail.security.operator') : deviceName({ t }, event.userAgent ?? ''),
    address: event.ip ?? t.t('mail.security.unknownAddress'),
  };
}

/** The outbox's row of the mail telling `to` of `event` (of `kind`), in `deps.t`'s language. */
export function noticeMail(
  deps: MailDeps,
  input: { event: SecurityEvent; kind: NoticeKind; to: string; id?: string },
  now: number,
): Mail {
  const { event, kind } = input;
  const { t } = deps;
  const data = event.data ?? {};
  const message = composeNotice(t, WORDS[kind], {
    product: deps.mail.productName,
    color: deps.mail.color,
    issuer: deps.issuer,
    values: {
      name: String(data.name ?? ''),
      provider: String(data.provider ?? ''),
      left: typeof data.left === 'number' ? data.left : 0,
    },
    at: t.dateTime(event.at),
    ...source(t, event),
  });
  return outboxMail(deps, { kind: 'security', to: input.to, userId: event.userId, message, id: input.id }, now);
}

/** Writes the mails of the events not yet told (see above); run at each look of the mail worker. */
export class SecurityNotifier {
  readonly #store: NoticeStore;
  readonly #settings: MailSettings;
  readonly #defaultLocale: Locale;
  readonly #log: OutboxLog;

  constructor(store: NoticeStore, settings: MailSettings, options: { defaultLocale: Locale; log: OutboxLog }) {
    this.#store = store;
    this.#settings = settings;
    this.#defaultLocale = options.defaultLocale;
    this.#log = options.log;
  }

  /** Writes the mails of the events of the last WINDOW seconds not yet told: how many it wrote. */
  async runOnce(now: number): Promise<number> {
    const rules = NOTICES.map((notice) => notice.rule);
    let mails: Mail[];
    try {
      const untold = await this.#store.untoldEvents({ rules, since: now - WINDOW, limit: BATCH });
      mails = untold.flatMap(({ event, recipient }) => {
        const kind = noticeKind(event);
        if (!kind) return [];
        const locale = event.locale !== null && isLocale(event.locale) ? event.locale : this.#defaultLocale;
        const deps = { ...this.#settings, t: translator(locale) };
        return [noticeMail(deps, { event, kind, to: recipient, id: event.id }, now)];
      });
      await this.#store.queueNotices(mails);
    } catch (err) {
      // The database is away: the events wait, and are told at a later look.
      this.#log.warn({ err: (err as Error).message }, 'mail: the security notifications cannot be written');
      return 0;
    }
    if (mails.length > 0) this.#log.info({ notices: mails.length }, 'mail: security notifications written');
    return mails.length;
  }
}
