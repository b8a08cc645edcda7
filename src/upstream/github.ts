// GitHub (or GitHub Enterprise Server), which speaks OAuth 2.0 but not OpenID Connect: its web flow
// (docs.github.com, "Authorizing OAuth apps") with `state` and PKCE (S256, which GitHub accepts),
// the code exchanged at /login/oauth/access_token asking for JSON (`Accept: application/json`;
// GitHub answers errors with 200 and an `error` field), then the REST API's GET /user (the person:
// their numeric id is the subject, since a login can be renamed) and GET /user/emails (the primary
// email and whether GitHub verified it). The bases are the provider's github_url and github_api_url.
import type { UpstreamProvider } from '../store/upstream.ts';
import { UpstreamError } from './errors.ts';
import { upstreamRequest } from './fetch.ts';
import type { UpstreamIdentity } from './identity.ts';

export const GITHUB_URL = 'https://github.com';
export const GITHUB_API_URL = 'https://api.github.com';
/** The person's profile, and their email addresses (the `user:email` scope). */
export const GITHUB_SCOPES = ['read:user', 'user:email'];

/** The authorization request's URL at GitHub. */
export function githubAuthorizationUrl(
  provider: UpstreamProvider,
  request: { redirectUri: string; state: string; codeChallenge: string; loginHint: string | null },
): URL {
  const url = new URL(`${provider.githubUrl ?? GITHUB_URL}/login/oauth/authorize`);
  url.search = new URLSearchParams({
    client_id: provider.clientId,
    redirect_uri: request.redirectUri,
    scope: provider.scopes.join(' '),
    state: request.state,
    code_challenge: request.codeChallenge,
    code_challenge_method: 'S256',
    // GitHub's own hint: the account to suggest.
    ...(request.loginHint ? { login: request.loginHint } : {}),
  }).toString();
  return url;
}

function json(body: Buffer, what: string): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new UpstreamError('invalid_response', `GitHub's ${what} is not JSON`);
  }
}

/** A GET of GitHub's REST API with the person's token. */
async function api(provider: UpstreamProvider, path: string, token: string): Promise<unknown> {
  const answer = await upstreamRequest(`${provider.githubApiUrl ?? GITHUB_API_URL}${path}`, {
    headers: {
      accept: 'application/vnd.github+json',
      authorization: `Bearer ${token}`,
      'x-github-api-version': '2022-11-28',
      // The REST API refuses requests without a User-Agent.
      'user-agent': 'Tessera',
    },
  });
  if (answer.status !== 200) throw new UpstreamError('invalid_response', `GitHub's ${path} answered ${answer.status}`);
  return json(answer.body, path);
}

interface GithubUser {
  id: number;
  login: string;
  name?: string | null;
}

interface GithubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

/**
 * The callback's code exchanged for a token, then the person (GET /user); `profile` adds their
 * email (GET /user/emails) when more than the subject is needed (a first sign-in). A GitHub error
 * (the person cancelled) is the provider's error.
 */
export async function githubCallback(
  provider: UpstreamProvider,
  clientSecret: string,
  query: URLSearchParams,
  checks: { state: string; verifier: string; redirectUri: string },
): Promise<{ identity: UpstreamIdentity; profile: () => Promise<UpstreamIdentity> }> {
  const error = query.get('error');
  if (error) {
    const description = query.get('error_description') ?? error;
    throw new UpstreamError('provider_error', `GitHub answered ${error}: ${description}`, { providerError: error });
  }
  const code = query.get('code');
  if (query.get('state') !== checks.state || !code) {
    throw new UpstreamError('invalid_response', "GitHub's answer does not carry this sign-in's state and a code");
  }
  const answer = await upstreamRequest(`${provider.githubUrl ?? GITHUB_URL}/login/oauth/access_token`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_id: provider.clientId,
      client_secret: clientSecret,
      code,
      redirect_uri: checks.redirectUri,
      code_verifier: checks.verifier,
    }).toString(),
  });
  const token = json(answer.body, 'token answer') as { access_token?: unknown; error?: unknown };
  if (typeof token.error === 'string') {
    throw new UpstreamError('provider_error', `GitHub refused the code: ${token.error}`, {
      providerError: token.error,
    });
  }
  if (answer.status !== 200 || typeof token.access_token !== 'string') {
    throw new UpstreamError('invalid_response', `GitHub's token answer (${answer.status}) has no access token`);
  }
  const user = (await api(provider, '/user', token.access_token)) as Partial<GithubUser>;
  if (typeof user.id !== 'number' || typeof user.login !== 'string') {
    throw new UpstreamError('invalid_response', "GitHub's /user has no id and login");
  }
  const identity: UpstreamIdentity = {
    subject: String(user.id),
    email: null,
    emailVerified: false,
    preferredUsername: user.login,
    name: typeof user.name === 'string' && user.name.trim() ? user.name.trim().slice(0, 256) : null,
    givenName: null,
    familyName: null,
    amr: [],
  };
  const profile = async () => {
    const emails = await api(provider, '/user/emails', token.access_token as string);
    const list = (Array.isArray(emails) ? emails : []).filter(
      (e): e is GithubEmail => typeof e?.email === 'string' && typeof e.verified === 'boolean',
    );
    // The primary email; failing that (none is marked), a verified one.
    const email = list.find((e) => e.primary) ?? list.find((e) => e.verified);
    return { ...identity, email: email?.email ?? null, emailVerified: email?.verified ?? false };
  };
  return { identity, profile };
}
