// What a security notification says (./security.ts), in the reader's language, plain text and HTML from
// the same words, as the other mails (./messages.ts): the product's name at its top; what happened;
// when (its time zone named), from which browser and address; that nothing is to be done if it was
// them, and if not, a button to reset the password and a link to the account page.
import type { MessageKey, Translator } from '../i18n/index.ts';
import { html } from '../ui/html.ts';
import { linkButton, mailDocument, type Message } from './messages.ts';

export interface NoticeWords {
  subject: MessageKey;
  intro: MessageKey;
  /** What to do if it was them, when not "nothing". */
  yours?: MessageKey;
}

export function composeNotice(
  t: Translator,
  words: NoticeWords,
  input: {
    product: string;
    color?: string | undefined;
    issuer: string;
    /** The facts the intro names (a passkey's name, a provider, the codes left). */
    values: Record<string, string | number>;
    at: string;
    device: string;
    address: string;
  },
): Message {
  const values = { ...input.values, product: input.product };
  const subject = t.t(words.subject, values);
  const facts = [
    t.t('mail.security.when', { at: input.at }),
    t.t('mail.security.browser', { device: input.device }),
    t.t('mail.security.address', { address: input.address }),
  ];
  const yours = t.t(words.yours ?? 'mail.security.yours');
  const reset = { label: t.t('mail.security.reset'), href: `${input.issuer}/reset/request` };
  const review = { label: t.t('mail.security.review'), href: `${input.issuer}/account` };
  const lines = [
    t.t(words.intro, values),
    '',
    ...facts,
    '',
    yours,
    t.t('mail.security.notYours'),
    '',
    `${reset.label}: ${reset.href}`,
    `${review.label}: ${review.href}`,
  ];
  const body = html`<p>${t.html(words.intro, values)}</p>
<p>${facts.map((fact, i) => html`${i > 0 ? html`<br>` : ''}${fact}`)}</p>
<p>${yours}</p>
<p>${t.html('mail.security.notYours')}</p>
<p>${linkButton(reset.href, reset.label, input.color)}</p>
<p><a href="${review.href}">${review.label}</a></p>`;
  return { subject, text: `${lines.join('\n')}\n`, html: mailDocument(t, subject, input.product, body) };
}
