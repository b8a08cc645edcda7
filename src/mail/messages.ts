// What each mail says, in the reader's language: every text is a message of the catalogues
// (src/i18n/messages, keys `mail.*`), plain text and HTML from the same words. A mail carries the
// product's name and its link, nothing else: no username, no address, no account data.
import type { MessageKey, Translator } from '../i18n/index.ts';
import { textOn } from '../ui/colours.ts';
import { html, type SafeHtml } from '../ui/html.ts';

export type MailText = 'reset' | 'invite' | 'verify' | 'signup';

export interface Message {
  subject: string;
  text: string;
  html: string;
}

interface Words {
  subject: MessageKey;
  intro: MessageKey;
  action: MessageKey;
  expiry: MessageKey | null;
  ignore: MessageKey;
}

/** Each mail's texts, named literally (the catalogue test finds them so). */
const WORDS: Record<MailText, Words> = {
  reset: {
    subject: 'mail.reset.subject',
    intro: 'mail.reset.intro',
    action: 'mail.reset.action',
    expiry: 'mail.reset.expiry',
    ignore: 'mail.reset.ignore',
  },
  invite: {
    subject: 'mail.invite.subject',
    intro: 'mail.invite.intro',
    action: 'mail.invite.action',
    expiry: 'mail.invite.expiry',
    ignore: 'mail.invite.ignore',
  },
  verify: {
    subject: 'mail.verify.subject',
    intro: 'mail.verify.intro',
    action: 'mail.verify.action',
    expiry: 'mail.verify.expiry',
    ignore: 'mail.verify.ignore',
  },
  signup: {
    subject: 'mail.signup.subject',
    intro: 'mail.signup.intro',
    action: 'mail.signup.action',
    expiry: 'mail.signup.expiry',
    ignore: 'mail.signup.ignore',
  },
};

/**
 * The mail of `kind` in `t`'s language, naming the product (the brand's name) at its top, with its
 * link as a button in the brand's colour (its text black or white, whichever reads better). No logo:
 * most mail clients block remote pictures, and loading one would tell the sender the mail was opened.
 */
export function composeMessage(
  t: Translator,
  kind: MailText,
  product: string,
  link: string,
  color = '#2f5bea',
): Message {
  const w = WORDS[kind];
  const values = { product };
  const subject = t.t(w.subject, values);
  const expiry = w.expiry ? t.t(w.expiry) : '';
  const lines = [t.t(w.intro, values), '', `${t.t(w.action)}:`, link, '', ...(expiry ? [expiry] : []), t.t(w.ignore)];
  const body = html`<p>${t.html(w.intro, values)}</p>
<p>${linkButton(link, t.t(w.action), color)}</p>
${expiry ? html`<p>${expiry}</p>` : ''}
<p>${t.html(w.ignore)}</p>`;
  return { subject, text: `${lines.join('\n')}\n`, html: mailDocument(t, subject, product, body) };
}

/** A link as a button in the brand's colour, its text black or white, whichever reads better. */
export function linkButton(href: string, label: string, color = '#2f5bea'): SafeHtml {
  const style = `background:${color};color:${textOn(color)};padding:10px 18px;border-radius:6px;text-decoration:none`;
  return html`<a href="${href}" style="${style};display:inline-block;font-weight:bold">${label}</a>`;
}

/** A mail's HTML: its language, its subject as the title, the product's name at its top, then `body`. */
export function mailDocument(t: Translator, subject: string, product: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="${t.locale}"><head><meta charset="utf-8"><title>${subject}</title></head>
<body style="font-family: sans-serif; line-height: 1.5">
<p style="font-weight:bold;font-size:1.1em">${product}</p>
${body}
</body></html>
`.value;
}
