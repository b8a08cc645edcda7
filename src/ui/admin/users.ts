// The console's users: a search (a GET form) and its results, and one user's page: whether they can
// sign in (locked, delayed, disabled), their recent sign-ins, factors, grants and sessions, and the
// support person's buttons (unlock, disable or enable, reset second factors, sign out everywhere).
import type { MessageKey } from '../../i18n/index.ts';
import type { User } from '../../store/users.ts';
import { deviceName } from '../device.ts';
import { html } from '../html.ts';
import type { PageContext } from '../layout.ts';
import { actionButton, consolePage, dataTable, nextPageLink, postForm } from './console.ts';

export function usersPage(
  ui: PageContext,
  input: { admin: string; search: string; users: User[]; nextCursor: string | null },
): string {
  const { t } = ui;
  const results = dataTable(
    t.t('admin.users.none'),
    [t.t('admin.users.username'), t.t('admin.users.email'), t.t('admin.users.name'), t.t('admin.users.state')],
    input.users.map((user) => [
      html`<a href="/admin/users/${user.id}">${user.username}</a>`,
      user.email,
      user.name ?? '',
      user.disabled ? t.t('admin.users.disabled') : t.t('admin.users.active'),
    ]),
  );
  const query: Record<string, string> = input.search ? { q: input.search } : {};
  return consolePage(ui, {
    section: 'users',
    title: t.t('admin.users.title'),
    admin: input.admin,
    body: html`<form method="get" action="/admin/users" role="search">
<label for="q">${t.t('admin.users.search')}</label>
<input type="search" id="q" name="q" value="${input.search}" autocapitalize="none" spellcheck="false">
<button type="submit">${t.t('admin.users.searchButton')}</button>
</form>
${results}
${nextPageLink(ui, '/admin/users', query, input.nextCursor)}`,
  });
}

/**
 * A lock or delay in force on the user's sign-ins (src/admin/sign-in-locks.ts gives it): the page says
 * which, until when, and after how many failures.
 */
export interface SignInLockShown {
  state: 'open' | 'delayed' | 'locked';
  /** Epoch seconds when the lock or delay ends. */
  until: number | null;
  failures: number;
}

export interface UserDetail {
  user: User;
  lock: SignInLockShown | undefined;
  signIns: Array<{ at: number; ok: boolean; ip: string | null; userAgent: string | null }>;
  factors: string[];
  grants: Array<{ clientName: string; scope: string; createdAt: number }>;
  sessions: Array<{ createdAt: number; expiresAt: number; factors: string[] }>;
}

/** What the page says after an action (?done=…). */
export const DONE: Record<string, MessageKey> = {
  unlocked: 'admin.user.done.unlocked',
  'not-locked': 'admin.user.done.notLocked',
  disabled: 'admin.user.done.disabled',
  enabled: 'admin.user.done.enabled',
  'mfa-reset': 'admin.user.done.mfaReset',
  'signed-out': 'admin.user.done.signedOut',
  roles: 'admin.user.done.roles',
};

export function userPage(
  ui: PageContext,
  input: UserDetail & {
    admin: string;
    csrfToken: string;
    done?: MessageKey | undefined;
    /** Why the roles posted were refused, with what was posted. */
    roles?: { posted: string; problem: string } | undefined;
  },
): string {
  const { t } = ui;
  const { user, lock } = input;
  const base = `/admin/users/${user.id}`;
  const state = lock
    ? t.t(lock.state === 'locked' ? 'admin.user.locked' : 'admin.user.delayed', {
        until: t.dateTime(lock.until!),
        failures: lock.failures,
      })
    : t.t('admin.user.open');
  const refused = input.roles;
  const rolesError = refused && t.t('admin.user.rolesProblem', { problem: refused.problem });
  const rolesForm = html`${rolesError ? html`<p class="alert" id="roles-error" role="alert">${rolesError}</p>` : ''}
${postForm(
  `${base}/roles`,
  input.csrfToken,
  html`<label for="roles">${t.t('admin.user.rolesLabel')}</label>
<input type="text" id="roles" name="roles" value="${refused?.posted ?? user.roles.join(' ')}" autocapitalize="none"
  spellcheck="false"${refused ? html` aria-invalid="true" aria-describedby="roles-error"` : ''}>
<button type="submit" class="secondary">${t.t('admin.user.saveRoles')}</button>`,
)}`;
  const list = <T>(items: T[], empty: MessageKey, line: (item: T) => unknown) =>
    items.length === 0
      ? html`<p class="muted">${t.t(empty)}</p>`
      : html`<ul>
${items.map((item) => html`<li>${line(item)}</li>\n`)}</ul>`;
  return consolePage(ui, {
    section: 'users',
    title: t.t('admin.user.title', { username: user.username }),
    admin: input.admin,
    body: html`${input.done ? html`<p role="status">${t.t(input.done, { username: user.username })}</p>` : ''}
<p>${user.email}${user.name ? html` · ${user.name}` : ''}</p>
<p><strong>${state}</strong></p>
${user.disabled ? html`<p class="alert">${t.t('admin.user.disabledNote')}</p>` : ''}
<p>${t.t('admin.user.roles')} ${user.roles.length === 0 ? t.t('admin.user.noRoles') : user.roles.join(', ')}</p>
${rolesForm}
<h2>${t.t('admin.user.actions')}</h2>
<div class="actions">
${lock ? actionButton(`${base}/unlock`, input.csrfToken, t.t('admin.user.unlock'), false) : ''}
${
  user.disabled
    ? actionButton(`${base}/enable`, input.csrfToken, t.t('admin.user.enable'))
    : actionButton(`${base}/disable`, input.csrfToken, t.t('admin.user.disable'))
}
${actionButton(`${base}/reset-mfa`, input.csrfToken, t.t('admin.user.resetMfa'))}
${actionButton(`${base}/sign-out`, input.csrfToken, t.t('admin.user.signOut'))}
</div>
<p><a href="/admin/events?${new URLSearchParams({ user: user.username })}">${t.t('admin.user.events')}</a></p>
<h2>${t.t('admin.user.signIns')}</h2>
${list(input.signIns, 'admin.user.noSignIns', (s) => {
  const outcome = t.t(s.ok ? 'admin.user.signedIn' : 'admin.user.signInFailed');
  const from = [s.ip, s.userAgent ? deviceName(ui, s.userAgent) : null].filter(Boolean).join(' · ');
  return html`<strong>${outcome}</strong> ${t.dateTime(s.at)}<br><span class="muted">${from}</span>`;
})}
<h2>${t.t('admin.user.factors')}</h2>
${list(input.factors, 'admin.user.noFactors', (method) => html`<code>${method}</code>`)}
<h2>${t.t('admin.user.grants')}</h2>
${list(input.grants, 'admin.user.noGrants', (g) => {
  const since = t.t('account.since', { date: t.date(g.createdAt) });
  return html`<strong>${g.clientName}</strong> <code>${g.scope}</code> <span class="muted">${since}</span>`;
})}
<h2>${t.t('admin.user.sessions')}</h2>
${list(input.sessions, 'admin.user.noSessions', (s) =>
  t.t('admin.user.session', {
    at: t.dateTime(s.createdAt),
    until: t.dateTime(s.expiresAt),
    factors: s.factors.join(' + '),
  }),
)}`,
  });
}
