// The peer: node-oidc-provider configured to do the same work as Tessera — JWT access tokens (its
// resourceIndicators feature), a refresh token on every code exchange, rotation on, the same signing
// algorithm — over an in-memory adapter without a size limit. Run as a child process by bench/run.ts.
import { createServer } from 'node:http';
import { generateKeyPair, exportJWK } from 'jose';
import Provider from 'oidc-provider';

const env = process.env;
const issuer = env.PEER_ISSUER!;
const alg = (env.PEER_ALG ?? 'RS256') as 'RS256' | 'ES256';
const API = 'urn:tessera:bench:api';

// The library's own memory adapter keeps 1000 entries and breaks under load; this one has no limit.
const storage = new Map<string, { payload: Record<string, unknown>; expiresAt: number }>();
const grants = new Map<string, Set<string>>();
class MemoryAdapter {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
  key(id: string) {
    return `${this.name}:${id}`;
  }
  async upsert(id: string, payload: Record<string, unknown>, expiresIn?: number) {
    const key = this.key(id);
    storage.set(key, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
    const grantId = payload.grantId as string | undefined;
    if (grantId) {
      let set = grants.get(grantId);
      if (!set) grants.set(grantId, (set = new Set()));
      set.add(key);
    }
    if (payload.uid) storage.set(`uid:${payload.uid as string}`, { payload: { id }, expiresAt: Infinity });
  }
  async find(id: string) {
    const entry = storage.get(this.key(id));
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      storage.delete(this.key(id));
      return undefined;
    }
    return entry.payload;
  }
  async findByUid(uid: string) {
    const ref = storage.get(`uid:${uid}`);
    return ref ? this.find(ref.payload.id as string) : undefined;
  }
  async findByUserCode() {
    return undefined;
  }
  async consume(id: string) {
    const entry = storage.get(this.key(id));
    if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string) {
    storage.delete(this.key(id));
  }
  async revokeByGrantId(grantId: string) {
    for (const key of grants.get(grantId) ?? []) storage.delete(key);
    grants.delete(grantId);
  }
}

const { privateKey } = await generateKeyPair(alg, { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), alg, use: 'sig', kid: `bench-${alg}` };

const provider = new Provider(issuer, {
  adapter: MemoryAdapter,
  jwks: { keys: [jwk] },
  clients: [
    {
      client_id: env.PEER_CLIENT_ID!,
      client_secret: env.PEER_CLIENT_SECRET!,
      redirect_uris: [env.PEER_REDIRECT_URI!],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: alg,
    },
  ],
  routes: {
    authorization: '/oauth2/authorize',
    token: '/oauth2/token',
    userinfo: '/oauth2/userinfo',
    jwks: '/oauth2/jwks',
  },
  scopes: ['openid', 'profile', 'email', 'apps', 'webhooks'],
  claims: { openid: ['sub'], profile: ['name', 'preferred_username'], email: ['email', 'email_verified'] },
  features: {
    devInteractions: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // API scopes make a JWT access token for the API, as Tessera issues; a request with only OIDC
      // scopes gets the provider's userinfo token (its userinfo endpoint refuses JWTs for an API).
      defaultResource: (ctx: { oidc: { params?: { scope?: string } } }) =>
        /\b(apps|webhooks)\b/.test(ctx.oidc.params?.scope ?? '') ? API : undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'apps webhooks',
        audience: API,
        accessTokenTTL: 86_400,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg } },
      }),
    },
  },
  issueRefreshToken: () => true,
  rotateRefreshToken: true,
  pkce: { required: () => false },
  ttl: {
    AccessToken: 86_400,
    AuthorizationCode: 60,
    IdToken: 3_600,
    RefreshToken: 2_592_000,
    Session: 86_400,
    Grant: 2_592_000,
    Interaction: 1_800,
  },
  findAccount: async (_ctx: unknown, sub: string) => ({
    accountId: sub,
    claims: async () => ({
      sub,
      name: `User ${sub}`,
      preferred_username: sub,
      email: `${sub}@example.com`,
      email_verified: true,
    }),
  }),
} as never);
provider.proxy = false;

const server = createServer(provider.callback());
server.listen(Number(env.PEER_PORT), '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
