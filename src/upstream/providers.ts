// An upstream provider as the operator configures it (`tessera providers`): the rules its settings
// keep, and its defaults. The client secret is encrypted here, before anything is stored.
import type { ProviderType, UpstreamProvider } from '../store/upstream.ts';
import { GITHUB_API_URL, GITHUB_SCOPES, GITHUB_URL } from './github.ts';
import type { Secrets } from '../tokens/secrets.ts';
import { sealClientSecret } from './secrets.ts';

export class ProviderInputError extends Error {
  override name = 'ProviderInputError';
}

/** An id: in the callback URI's path, idp_hint and TESSERA_DEFAULT_PROVIDER. */
export const PROVIDER_ID = /^[a-z0-9][a-z0-9-]{0,39}$/;

export const OIDC_SCOPES = ['openid', 'profile', 'email'];

/** What `providers create` and `providers update` may set. */
export interface ProviderSettings {
  name?: string | undefined;
  issuer?: string | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  scopes?: string[] | undefined;
  trustEmail?: boolean | undefined;
  linkOnly?: boolean | undefined;
  trustUpstreamMfa?: boolean | undefined;
  allowPrivateNetwork?: boolean | undefined;
  loginHintDomains?: string[] | undefined;
  githubUrl?: string | undefined;
  githubApiUrl?: string | undefined;
  acceptIdJag?: boolean | undefined;
}

export interface SettingsContext {
  /** TESSERA_SECRET (and the previous ones), which the client secret is encrypted under. */
  secret: Secrets;
  /** TESSERA_OUTBOUND_ALLOW_PRIVATE: plain http URLs are accepted (development and tests). */
  allowHttp: boolean;
  now: number;
}

/** An https URL (http with allowHttp) without credentials, query or fragment; `trim` drops a final slash. */
function baseUrl(value: string, option: string, allowHttp: boolean, trim: boolean): string {
  const url = URL.parse(value);
  if (!url || value.length > 2000) throw new ProviderInputError(`${option}: "${value}" is not an absolute URL`);
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) {
    throw new ProviderInputError(
      `${option}: must be https (plain http only with TESSERA_OUTBOUND_ALLOW_PRIVATE=true, for development)`,
    );
  }
  if (url.username || url.password || url.search || url.hash || value.includes('?') || value.includes('#')) {
    throw new ProviderInputError(`${option}: must not have credentials, a query or a fragment`);
  }
  return trim ? value.replace(/\/+$/, '') : value;
}

function domainList(domains: string[]): string[] {
  const clean = domains.map((d) => d.trim().toLowerCase().replace(/^@/, '')).filter((d) => d !== '');
  for (const domain of clean) {
    if (!/^[a-z0-9](?:[a-z0-9-]{0,62}\.)*[a-z0-9-]{1,63}$/.test(domain)) {
      throw new ProviderInputError(`--login-hint-domain: "${domain}" is not a domain name`);
    }
  }
  return [...new Set(clean)];
}

/** The name a new provider's button shows when none is given. */
function defaultName(type: ProviderType, issuer: string | null): string {
  return type === 'github' ? 'GitHub' : new URL(issuer!).host;
}

/** The id a new provider gets when none is given: from its name. */
export function defaultId(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return slug || 'provider';
}

/** Applies `settings` to `base` (a provider being made, or one stored), checking every rule. */
function apply(base: UpstreamProvider, settings: ProviderSettings, context: SettingsContext): UpstreamProvider {
  const next = { ...base, updatedAt: context.now };
  const github = next.type === 'github';
  if (settings.name !== undefined) next.name = settings.name.trim();
  if (next.name === '' || next.name.length > 64) throw new ProviderInputError('--name: 1 to 64 characters');
  if (settings.issuer !== undefined) {
    if (github) throw new ProviderInputError('--issuer is for OpenID Connect providers (--type oidc)');
    // The issuer is compared exactly with the discovery document's and the ID token's iss (OIDC
    // Discovery §4.3): kept as given, a final slash included.
    next.issuer = baseUrl(settings.issuer, '--issuer', context.allowHttp, false);
  }
  if (!github && !next.issuer) throw new ProviderInputError('--issuer is required for an OpenID Connect provider');
  for (const [value, option, key] of [
    [settings.githubUrl, '--github-url', 'githubUrl'],
    [settings.githubApiUrl, '--github-api-url', 'githubApiUrl'],
  ] as const) {
    if (value === undefined) continue;
    if (!github) throw new ProviderInputError(`${option} is for GitHub (--type github)`);
    next[key] = baseUrl(value, option, context.allowHttp, true);
  }
  if (settings.clientId !== undefined) next.clientId = settings.clientId.trim();
  if (next.clientId === '' || next.clientId.length > 255)
    throw new ProviderInputError('--client-id: 1 to 255 characters');
  if (settings.clientSecret !== undefined) {
    const clientSecret = settings.clientSecret.replace(/\r?\n$/, '');
    if (clientSecret === '' || clientSecret.length > 1024) {
      throw new ProviderInputError('the client secret (standard input): 1 to 1024 characters');
    }
    next.clientSecretEnc = sealClientSecret(clientSecret, context.secret);
  }
  if (next.clientSecretEnc === '') throw new ProviderInputError('--client-secret-stdin is required');
  if (settings.scopes !== undefined) {
    const scopes = [...new Set(settings.scopes)];
    if (scopes.some((s) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s))) {
      throw new ProviderInputError('--scope: space-separated scope tokens (RFC 6749 §3.3)');
    }
    if (!github && !scopes.includes('openid')) throw new ProviderInputError('--scope must include openid');
    next.scopes = scopes;
  }
  if (settings.trustEmail !== undefined) next.trustEmail = settings.trustEmail;
  if (settings.linkOnly !== undefined) next.linkOnly = settings.linkOnly;
  if (settings.trustUpstreamMfa !== undefined) next.trustUpstreamMfa = settings.trustUpstreamMfa;
  if (github && next.trustUpstreamMfa) {
    throw new ProviderInputError('--trust-upstream-mfa: GitHub does not say how a person signed in');
  }
  if (settings.allowPrivateNetwork !== undefined) next.allowPrivateNetwork = settings.allowPrivateNetwork;
  if (settings.loginHintDomains !== undefined) next.loginHintDomains = domainList(settings.loginHintDomains);
  if (settings.acceptIdJag !== undefined) next.acceptIdJag = settings.acceptIdJag;
  // An ID-JAG is a JWT signed with keys its issuer's discovery document names: OpenID Connect only.
  if (github && next.acceptIdJag) throw new ProviderInputError('--accept-id-jag is for OpenID Connect providers');
  return next;
}

/** A new provider (`providers create`). */
export function newProvider(
  input: ProviderSettings & { type: ProviderType; id?: string | undefined },
  context: SettingsContext,
): UpstreamProvider {
  const github = input.type === 'github';
  const issuer = github ? null : input.issuer ? baseUrl(input.issuer, '--issuer', context.allowHttp, false) : null;
  if (!github && !issuer) throw new ProviderInputError('--issuer is required for an OpenID Connect provider');
  const name = input.name?.trim() || defaultName(input.type, issuer);
  const id = input.id ?? defaultId(name);
  if (!PROVIDER_ID.test(id)) {
    throw new ProviderInputError(`--id: "${id}" must be 1 to 40 lowercase letters, digits and -, not starting with -`);
  }
  const base: UpstreamProvider = {
    id,
    type: input.type,
    name,
    issuer,
    clientId: '',
    clientSecretEnc: '',
    scopes: github ? GITHUB_SCOPES : OIDC_SCOPES,
    trustEmail: false,
    linkOnly: false,
    trustUpstreamMfa: false,
    allowPrivateNetwork: false,
    loginHintDomains: [],
    githubUrl: github ? GITHUB_URL : null,
    githubApiUrl: github ? GITHUB_API_URL : null,
    acceptIdJag: false,
    createdAt: context.now,
    updatedAt: context.now,
  };
  return apply(base, { ...input, name }, context);
}

/** A stored provider with `settings` changed (`providers update`); its id and type stay. */
export function changedProvider(
  provider: UpstreamProvider,
  settings: ProviderSettings,
  context: SettingsContext,
): UpstreamProvider {
  return apply(provider, settings, context);
}
