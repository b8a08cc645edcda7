// Upstream providers for the tests of signing in through one (src/upstream), each a real server on
// 127.0.0.1 and a port of its own, stopped by the test: node-oidc-provider with accounts the test
// chooses, a proxy in front of it that can alter its token answers (signing with its real key, or
// another), and a server that accepts connections and never answers (GitHub's stand-in is
// ./github-stand-in.ts); and the tessera command as an operator runs it against a test server.
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWK, SignJWT, type CryptoKey } from 'jose';
import Provider from 'oidc-provider';
import { freePort } from './server.ts';

export interface Account {
  sub: string;
  preferred_username?: string;
  name?: string;
  email?: string;
  email_verified?: boolean;
}

async function listen(server: Server, port: number): Promise<void> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export interface OidcUpstream {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who signs in next, and the amr the provider states for it; or the error it answers instead. */
  next: { account: Account; amr: string[]; deny?: { error: string; error_description: string } };
  /** The provider's signing key, private: a tampering proxy signs with it to pass the signature check. */
  privateKey: CryptoKey;
  kid: string;
  /** Authorization requests received, their parameters. */
  authorizations: URLSearchParams[];
  close(): Promise<void>;
}

/**
 * node-oidc-provider at `issuer` (default http://localhost:<its port>), with one confidential client
 * whose redirect URIs are given; its sign-in and consent are the test's (`next`), finished at once.
 * `port` lets a proxy own the issuer's address while the provider listens elsewhere.
 */
export async function startOidcUpstream(options: {
  redirectUris: string[];
  issuer?: string;
  port?: number;
  /** Serve https with this key and certificate (./tls.ts). */
  tls?: { key: string; cert: string };
}): Promise<OidcUpstream> {
  const port = options.port ?? (await freePort());
  const issuer = options.issuer ?? `${options.tls ? 'https' : 'http'}://localhost:${port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = `upstream-${randomBytes(4).toString('hex')}`;
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const clientId = `tessera-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('base64url');
  const accounts = new Map<string, Account>();
  const upstream: OidcUpstream = {
    issuer,
    clientId,
    clientSecret,
    next: { account: { sub: 'nobody' }, amr: ['pwd'] },
    privateKey,
    kid,
    authorizations: [],
    close: async () => {},
  };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    // amr is in ID tokens when a scope lists it; profile and email claims come from userinfo.
    claims: { openid: ['sub', 'amr'], profile: ['name', 'preferred_username'], email: ['email', 'email_verified'] },
    pkce: { required: () => true },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx: unknown, sub: string) => {
      const account = accounts.get(sub);
      return account && { accountId: sub, claims: async () => account };
    },
  } as never);
  const callback = provider.callback();
  const handler = (req: IncomingMessage, res: import('node:http').ServerResponse) => {
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname.endsWith('/auth')) upstream.authorizations.push(url.searchParams);
    if (!url.pathname.startsWith('/interaction/')) return callback(req, res);
    // The test's person signs in and consents at once.
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      const { account, amr, deny } = upstream.next;
      if (deny) return provider.interactionFinished(req, res, deny, { mergeWithLastSubmission: false });
      if (details.prompt.name === 'login') {
        accounts.set(account.sub, account);
        const login = { accountId: account.sub, amr };
        return provider.interactionFinished(req, res, { login }, { mergeWithLastSubmission: false });
      }
      const grant = new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    })().catch((err: unknown) => res.writeHead(500).end(String(err)));
  };
  const server = options.tls ? createHttpsServer(options.tls, handler) : createServer(handler);
  await listen(server as Server, port);
  upstream.close = () => close(server as Server);
  return upstream;
}

/** How the proxy alters the ID token of the token endpoint's answer. */
export type Tampering =
  | 'none'
  /** Its payload changed (these claims replaced), its signature kept. */
  | { payload: Record<string, unknown> }
  /** Signed again with a key the provider does not publish (same kid). */
  | 'foreign-key'
  /** Signed again with the provider's own key, after changing a claim. */
  | { claim: 'nonce' | 'iss' | 'aud' | 'exp'; value: unknown }
  /** The token endpoint does not answer. */
  | 'hang';

export interface TamperingProxy {
  url: string;
  mode: { tampering: Tampering };
  close(): Promise<void>;
}

/**
 * A proxy at http://localhost:<port> in front of `target`, which changes the ID token of answers to
 * POST …/token as `mode` says; signing again with `key` (the provider's own) where asked.
 */
export async function startTamperingProxy(
  port: number,
  target: string,
  key: { privateKey: CryptoKey; kid: string },
): Promise<TamperingProxy> {
  const mode: { tampering: Tampering } = { tampering: 'none' };
  const foreign = await generateKeyPair('RS256');
  const hung: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    const token = req.method === 'POST' && (req.url ?? '').split('?')[0]!.endsWith('/token');
    if (token && mode.tampering === 'hang') {
      hung.push(req);
      return;
    }
    const upstream = httpRequest(
      new URL(req.url ?? '/', target),
      { method: req.method, headers: req.headers },
      (answer) => {
        if (!token || mode.tampering === 'none' || answer.statusCode !== 200) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          return answer.pipe(res);
        }
        void (async () => {
          const json = JSON.parse(await body(answer)) as { id_token: string };
          json.id_token = await tamper(json.id_token, mode.tampering, key, foreign.privateKey);
          const text = JSON.stringify(json);
          const headers = { ...answer.headers, 'content-length': String(Buffer.byteLength(text)) };
          res.writeHead(200, headers).end(text);
        })();
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await listen(server, port);
  return { url: `http://localhost:${port}`, mode, close: () => close(server) };
}

async function tamper(
  idToken: string,
  tampering: Tampering,
  key: { privateKey: CryptoKey; kid: string },
  foreignKey: CryptoKey,
): Promise<string> {
  const [header, , signature] = idToken.split('.');
  const claims = decodeJwt(idToken);
  if (typeof tampering === 'object' && 'payload' in tampering) {
    const altered = Buffer.from(JSON.stringify({ ...claims, ...tampering.payload })).toString('base64url');
    return `${header}.${altered}.${signature}`;
  }
  const { alg, kid } = decodeProtectedHeader(idToken);
  const resign = (payload: Record<string, unknown>, signingKey: CryptoKey) =>
    new SignJWT(payload).setProtectedHeader({ alg: alg!, kid: kid! }).sign(signingKey);
  if (tampering === 'foreign-key') return resign(claims, foreignKey);
  if (typeof tampering === 'object' && 'claim' in tampering) {
    return resign({ ...claims, [tampering.claim]: tampering.value }, key.privateKey);
  }
  return idToken;
}

/** A server that accepts connections and never answers: a provider that is down but not refusing. */
export async function startSilentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://localhost:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * `tessera providers …` (or any command) against `server`'s database, as an operator runs it: with
 * the server's issuer and TESSERA_OUTBOUND_ALLOW_PRIVATE (the upstreams are on loopback, over http).
 */
export async function tessera(
  server: import('./server.ts').TestServer,
  args: string[],
  stdin = '',
): Promise<{ code: number; out: string }> {
  const { run } = await import('../../src/cli/main.ts');
  const { cliIo } = await import('./server.ts');
  const { lines, io } = cliIo(server, stdin);
  io.env = { ...io.env, TESSERA_ISSUER: server.issuer, TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'silent' };
  const code = await run(args, io);
  return { code, out: lines.join('\n') };
}
