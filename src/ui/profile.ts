// The account page's profile section: the claims a person owns (src/account/profile.ts), one field
// each, what the last save said.
import { PROFILE_FIELDS, type ProfileField } from '../account/profile.ts';
import type { MessageKey } from '../i18n/index.ts';
import { html } from './html.ts';
import { type PageContext, say, type Text } from './layout.ts';

export interface ProfileSection {
  /** Each field's value: the user's, or what they typed when it was refused. */
  values: Partial<Record<ProfileField, string>>;
  saved?: boolean;
  /** The field refused. */
  invalid?: ProfileField;
}

/** Each field's label, input type, autocomplete token (HTML §4.10.18.7) and hint. */
const FIELDS: Record<ProfileField, { label: MessageKey; type: string; autocomplete: string; hint?: MessageKey }> = {
  given_name: { label: 'profile.givenName', type: 'text', autocomplete: 'given-name' },
  middle_name: { label: 'profile.middleName', type: 'text', autocomplete: 'additional-name' },
  family_name: { label: 'profile.familyName', type: 'text', autocomplete: 'family-name' },
  nickname: { label: 'profile.nickname', type: 'text', autocomplete: 'nickname' },
  picture: { label: 'profile.picture', type: 'url', autocomplete: 'photo', hint: 'profile.urlHint' },
  website: { label: 'profile.website', type: 'url', autocomplete: 'url', hint: 'profile.urlHint' },
  zoneinfo: { label: 'profile.zoneinfo', type: 'text', autocomplete: 'off', hint: 'profile.zoneinfoHint' },
  locale: { label: 'profile.locale', type: 'text', autocomplete: 'language', hint: 'profile.localeHint' },
  birthdate: { label: 'profile.birthdate', type: 'text', autocomplete: 'bday', hint: 'profile.birthdateHint' },
  phone_number: { label: 'profile.phone', type: 'tel', autocomplete: 'tel', hint: 'profile.phoneHint' },
};

export function profileSection(ui: PageContext, input: ProfileSection & { csrfToken: string }) {
  const { t } = ui;
  const invalid: Text | undefined = input.invalid
    ? { key: 'profile.invalid', values: { field: t.t(FIELDS[input.invalid].label) } }
    : undefined;
  return html`<section aria-labelledby="profile-heading" id="profile">
<h2 id="profile-heading">${t.t('profile.heading')}</h2>
${input.saved ? html`<p role="status">${t.t('profile.saved')}</p>` : ''}
${invalid ? html`<p class="alert" id="profile-error" role="alert">${say(ui, invalid)}</p>` : ''}
<form method="post" action="/account/profile">
<input type="hidden" name="csrf" value="${input.csrfToken}">
${PROFILE_FIELDS.map((field) => {
  const { label, type, autocomplete, hint } = FIELDS[field];
  const id = `profile-${field.replaceAll('_', '-')}`;
  const refused = input.invalid === field;
  const described = [refused ? 'profile-error' : '', hint ? `${id}-hint` : ''].filter(Boolean).join(' ');
  return html`<label for="${id}">${t.t(label)}</label>
${hint ? html`<span class="muted" id="${id}-hint">${t.t(hint)}</span>` : ''}
<input type="${type}" id="${id}" name="${field}" autocomplete="${autocomplete}" maxlength="${
    type === 'url' ? '2048' : '256'
  }" value="${input.values[field] ?? ''}"${refused ? html` aria-invalid="true" autofocus` : ''}${
    described ? html` aria-describedby="${described}"` : ''
  }>
`;
})}<button type="submit">${t.t('profile.save')}</button>
</form>
</section>`;
}
