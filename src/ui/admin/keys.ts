// The console's signing keys: each key's state and dates (public facts only), and their rotation:
// staged (the new key signs once every cached JWKS has it), or now, for a compromised key, which asks
// for a recent sign-in (docs/rotation.md).
import type { MessageKey } from '../../i18n/index.ts';
import type { KeyDates } from '../../tokens/key-timeline.ts';
import { SIGNING_ALGS } from '../../tokens/keystore.ts';
import { html } from '../html.ts';
import type { PageContext } from '../layout.ts';
import { consolePage } from './console.ts';

/** What the page says after a rotation. */
export interface KeyRotationNote {
  key: Extract<MessageKey, 'admin.keys.staged' | 'admin.keys.already' | 'admin.keys.now'>;
  kid: string;
  at: number;
}

export function keysPage(
  ui: PageContext,
  input: { admin: string; csrfToken: string; keys: KeyDates[]; note?: KeyRotationNote | undefined },
): string {
  const { t } = ui;
  const when = (at: number | null) => (at === null ? '' : t.dateTime(at));
  const rows = input.keys.map(
    (k) => html`<tr>
<td><code>${k.kid}</code></td>
<td>${k.alg}</td>
<td><code>${k.state}</code></td>
<td>${when(k.createdAt)}</td>
<td>${when(k.activatesAt)}</td>
<td>${when(k.retiresAt)}</td>
</tr>
`,
  );
  const { note } = input;
  const rotate = (alg: string, action: string, label: MessageKey, secondary: boolean) =>
    html`<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<input type="hidden" name="alg" value="${alg}">
<button type="submit"${secondary ? html` class="secondary"` : ''}>${t.t(label, { alg })}</button>
</form>`;
  return consolePage(ui, {
    section: 'keys',
    title: t.t('admin.keys.title'),
    admin: input.admin,
    body: html`${note ? html`<p role="status">${t.t(note.key, { kid: note.kid, at: t.dateTime(note.at) })}</p>` : ''}
<table>
<thead><tr><th scope="col">${t.t('admin.keys.kid')}</th><th scope="col">${t.t('admin.keys.alg')}</th>
<th scope="col">${t.t('admin.keys.state')}</th><th scope="col">${t.t('admin.keys.created')}</th>
<th scope="col">${t.t('admin.keys.activates')}</th><th scope="col">${t.t('admin.keys.retires')}</th></tr></thead>
<tbody>
${rows}</tbody>
</table>
<h2>${t.t('admin.keys.rotation')}</h2>
<p>${t.t('admin.keys.explain')}</p>
${SIGNING_ALGS.map(
  (alg) => html`<div class="actions">
${rotate(alg, '/admin/keys/rotate', 'admin.keys.rotate', false)}
${rotate(alg, '/admin/keys/rotate-now', 'admin.keys.rotateNow', true)}
</div>
`,
)}`,
  });
}
