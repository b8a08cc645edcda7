// What the consent and account pages say a scope gives: Tessera's own scopes in the reader's
// language; a scope the operator described (TESSERA_API_SCOPES) in the operator's words.
import { DEFAULT_API_SCOPES, OIDC_SCOPES } from '../config/scopes.ts';
import type { MessageKey, Translator } from '../i18n/index.ts';

const BUILT_IN: Readonly<Record<string, MessageKey>> = {
  openid: 'scope.openid',
  profile: 'scope.profile',
  email: 'scope.email',
  address: 'scope.address',
  phone: 'scope.phone',
  roles: 'scope.roles',
  admin: 'scope.admin',
  apps: 'scope.apps',
  webhooks: 'scope.webhooks',
};

/** The English descriptions Tessera ships, which the catalogues translate. */
const SHIPPED = new Map<string, string>([
  ...OIDC_SCOPES,
  ...DEFAULT_API_SCOPES.split(';').map((entry) => entry.split('=') as [string, string]),
]);

/** A scope as the pages show it: its description first, its technical name beside it. */
export interface ScopeLine {
  name: string;
  /** The description configured (the operator's words, or Tessera's English). */
  description: string;
}

export function describeScope(t: Translator, scope: ScopeLine): string {
  const key = BUILT_IN[scope.name];
  return key && SHIPPED.get(scope.name) === scope.description ? t.t(key) : scope.description;
}
