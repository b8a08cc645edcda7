// A stand-in for GitHub on 127.0.0.1 that speaks its documented OAuth web flow and REST endpoints, for
// the tests of GitHub as an upstream provider (src/upstream/github.ts).
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { freePort } from './server.ts';

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export interface GithubAccount {
  id: number;
  login: string;
  name: string | null;
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
}

export interface GithubStandIn {
  /** The web base (github_url) and the REST API's (github_api_url, under /api/v3 as on GitHub Enterprise Server). */
  url: string;
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  next: GithubAccount;
  /** Whether the person declines at the authorize page (GitHub then redirects with error=access_denied). */
  deny: boolean;
  /** What the token endpoint was asked, each time. */
  tokenRequests: Array<{ accept: string | undefined; form: URLSearchParams }>;
  close(): Promise<void>;
}

/**
 * GitHub's documented OAuth web flow (GET /login/oauth/authorize, POST /login/oauth/access_token,
 * answering JSON only to Accept: application/json, errors as 200 with `error`) and REST API
 * (GET /user, GET /user/emails with a bearer token and a User-Agent), for one OAuth app whose
 * callback is `redirectUri`. The authorize page signs `next` in at once.
 */
export async function startGithubStandIn(redirectUri: string): Promise<GithubStandIn> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const codes = new Map<string, { challenge: string; account: GithubAccount; redirectUri: string }>();
  const tokens = new Map<string, GithubAccount>();
  const standIn: GithubStandIn = {
    url,
    apiUrl: `${url}/api/v3`,
    clientId: `Iv1.${randomBytes(8).toString('hex')}`,
    clientSecret: randomBytes(20).toString('hex'),
    next: { id: 1, login: 'octocat', name: null, emails: [] },
    deny: false,
    tokenRequests: [],
    close: async () => {},
  };
  const json = (res: ServerResponse, status: number, value: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(value));
  const server = createServer((req, res) => {
    const here = new URL(req.url ?? '/', url);
    void (async () => {
      if (req.method === 'GET' && here.pathname === '/login/oauth/authorize') {
        const q = here.searchParams;
        if (q.get('client_id') !== standIn.clientId || q.get('redirect_uri') !== redirectUri) {
          return res.writeHead(400).end('The redirect_uri is not associated with this application.');
        }
        if (q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) return res.writeHead(400).end();
        const back = new URL(redirectUri);
        if (standIn.deny) {
          back.searchParams.set('error', 'access_denied');
          back.searchParams.set('error_description', 'The user has denied your application access.');
        } else {
          const code = randomBytes(10).toString('hex');
          codes.set(code, { challenge: q.get('code_challenge')!, account: standIn.next, redirectUri });
          back.searchParams.set('code', code);
        }
        back.searchParams.set('state', q.get('state') ?? '');
        return res.writeHead(302, { location: back.href }).end();
      }
      if (req.method === 'POST' && here.pathname === '/login/oauth/access_token') {
        const form = new URLSearchParams(await body(req));
        standIn.tokenRequests.push({ accept: req.headers.accept, form });
        const issued = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        const ok =
          issued &&
          form.get('client_id') === standIn.clientId &&
          form.get('client_secret') === standIn.clientSecret &&
          form.get('redirect_uri') === issued.redirectUri &&
          createHash('sha256').update(verifier).digest('base64url') === issued.challenge;
        const answer = ok
          ? {
              access_token: `gho_${randomBytes(16).toString('hex')}`,
              token_type: 'bearer',
              scope: 'read:user,user:email',
            }
          : { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' };
        if (ok) tokens.set(answer.access_token!, issued.account);
        if (req.headers.accept !== 'application/json') {
          return res
            .writeHead(200, { 'content-type': 'application/x-www-form-urlencoded' })
            .end(new URLSearchParams(answer as unknown as Record<string, string>).toString());
        }
        return json(res, 200, answer);
      }
      if (req.method === 'GET' && here.pathname.startsWith('/api/v3/')) {
        const token = /^(?:Bearer|token) (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
        const account = token && tokens.get(token);
        if (!req.headers['user-agent'])
          return json(res, 403, { message: 'Request forbidden by administrative rules.' });
        if (!account) return json(res, 401, { message: 'Bad credentials' });
        if (here.pathname === '/api/v3/user') {
          const primary = account.emails.find((e) => e.primary);
          return json(res, 200, {
            login: account.login,
            id: account.id,
            name: account.name,
            email: primary?.email ?? null,
          });
        }
        if (here.pathname === '/api/v3/user/emails') {
          return json(
            res,
            200,
            account.emails.map((e) => ({ ...e, visibility: e.primary ? 'public' : null })),
          );
        }
      }
      res.writeHead(404).end();
    })().catch((err: unknown) => res.writeHead(500).end(String(err)));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  standIn.close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return standIn;
}
