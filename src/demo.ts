// Development convenience: on the first start of an empty database, a demo user and two demo clients
// (confidential and public), with their credentials printed and kept in the data folder, in a file
// named after the database (demo-<hash of DATABASE_URL>.json): a start on another database never
// prints credentials that do not work there.
import { createHash } from 'node:crypto';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createClient } from './admin/clients.ts';
import { createUser } from './admin/new-user.ts';
import { s256Challenge } from './oauth/pkce.ts';
import type { Config } from './config/index.ts';
import type { ClientStore } from './store/clients.ts';
import type { UserStore } from './store/users.ts';
import { randomToken } from './tokens/opaque.ts';
import { hashPassword } from './authn/password/hash.ts';

export interface DemoCredentials {
  username: string;
  password: string;
  confidential: { clientId: string; clientSecret: string };
  public: { clientId: string; codeVerifier: string };
}

export const DEMO_SCOPE = 'openid profile email apps webhooks';

export function demoCallbackUri(config: Pick<Config, 'issuer'>): string {
  return `${config.issuer}/demo/callback`;
}

export function demoFile(config: Pick<Config, 'dataDir' | 'databaseUrl'>): string {
  const database = createHash('sha256').update(config.databaseUrl).digest('hex').slice(0, 12);
  return join(config.dataDir, `demo-${database}.json`);
}

/** Seeds the demo data when the database has no users; returns the credentials, or undefined. */
export async function seedDemo(store: ClientStore & UserStore, config: Config): Promise<DemoCredentials | undefined> {
  if ((await store.countUsers()) > 0) return undefined;
  const password = randomToken(12);
  await createUser(store, config, {
    username: 'demo',
    email: 'demo@example.com',
    name: 'Demo User',
    givenName: 'Demo',
    familyName: 'User',
    passwordHash: await hashPassword(password),
  });
  const redirectUris = [demoCallbackUri(config)];
  // The demo's callback is on the issuer: in development that may be plain http on any host name.
  const demoConfig = { ...config, allowHttpRedirectUris: config.env !== 'production' };
  const confidential = await createClient(store, demoConfig, {
    name: 'Demo confidential client',
    redirectUris,
    scopes: DEMO_SCOPE.split(' '),
    public: false,
  });
  const pub = await createClient(store, demoConfig, {
    name: 'Demo public client',
    redirectUris,
    scopes: DEMO_SCOPE.split(' '),
    public: true,
  });
  const credentials: DemoCredentials = {
    username: 'demo',
    password,
    confidential: { clientId: confidential.client.clientId, clientSecret: confidential.clientSecret! },
    public: { clientId: pub.client.clientId, codeVerifier: randomToken() },
  };
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  await writeFile(demoFile(config), `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  return credentials;
}

/**
 * The demo credentials kept for this database, if its demo client still exists there. A development
 * issuer follows PORT, so the demo clients are given the callback on the issuer of this start when
 * they lack it: the URLs printed at start work on whichever port the server runs.
 */
export async function readDemoCredentials(
  store: ClientStore,
  config: Pick<Config, 'dataDir' | 'databaseUrl' | 'issuer'>,
): Promise<DemoCredentials | undefined> {
  let demo: DemoCredentials;
  try {
    demo = JSON.parse(await readFile(demoFile(config), 'utf8')) as DemoCredentials;
  } catch {
    return undefined;
  }
  if (!(await store.getClient(demo.confidential.clientId))) return undefined;
  const callback = demoCallbackUri(config);
  for (const clientId of [demo.confidential.clientId, demo.public.clientId]) {
    const client = await store.getClient(clientId);
    if (client && !client.redirectUris.includes(callback)) {
      await store.updateClient({ ...client, redirectUris: [...client.redirectUris, callback] });
    }
  }
  return demo;
}

export function demoAuthorizationUrls(config: Config, demo: DemoCredentials): { confidential: string; public: string } {
  const base = `${config.issuer}/oauth2/authorize`;
  const common = { response_type: 'code', redirect_uri: demoCallbackUri(config), scope: DEMO_SCOPE };
  const confidential = new URLSearchParams({ ...common, state: 'confidential', client_id: demo.confidential.clientId });
  const pub = new URLSearchParams({
    ...common,
    state: 'public',
    client_id: demo.public.clientId,
    code_challenge: s256Challenge(demo.public.codeVerifier),
    code_challenge_method: 'S256',
  });
  return { confidential: `${base}?${confidential}`, public: `${base}?${pub}` };
}

/** The token request a client would send for `code`, as a curl command. */
export function demoTokenCommands(
  config: Config,
  demo: DemoCredentials,
  code: string,
): { confidential: string; public: string } {
  const token = `${config.issuer}/oauth2/token`;
  const redirect = demoCallbackUri(config);
  return {
    confidential:
      `curl -s -u '${demo.confidential.clientId}:${demo.confidential.clientSecret}' ${token} ` +
      `-d grant_type=authorization_code -d 'code=${code}' --data-urlencode 'redirect_uri=${redirect}'`,
    public:
      `curl -s ${token} -d grant_type=authorization_code -d 'client_id=${demo.public.clientId}' ` +
      `-d 'code=${code}' -d 'code_verifier=${demo.public.codeVerifier}' --data-urlencode 'redirect_uri=${redirect}'`,
  };
}
