// A relying party's back-channel logout endpoint (OpenID Connect Back-Channel Logout 1.0 §2.5) for the
// tests: each logout token verified with `jose` against the server's JWKS as a relying party does
// (§2.6), or refused with 400; `status` makes it answer something else, as a receiver that is down.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';
import { BACKCHANNEL_LOGOUT_EVENT } from '../../src/oidc/logout-token.ts';
import { freePort } from './server.ts';

/** A relying party's back-channel logout endpoint: each logout token verified, or the status it answers. */
export class LogoutReceiver {
  readonly tokens: Array<{ header: { typ?: string }; payload: JWTPayload }> = [];
  readonly refused: string[] = [];
  status = 200;
  server: Server | undefined;
  url = '';
  #jwks: ReturnType<typeof createRemoteJWKSet> | undefined;

  async start(issuer: string) {
    this.#jwks = createRemoteJWKSet(new URL(`${issuer}/oauth2/jwks`));
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}/backchannel-logout`;
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        void (async () => {
          if (this.status !== 200) return response.writeHead(this.status).end();
          try {
            assert.equal(request.headers['content-type'], 'application/x-www-form-urlencoded');
            const token = new URLSearchParams(body).get('logout_token') ?? '';
            // Back-Channel Logout 1.0 §2.6: the checks a relying party makes.
            const { payload, protectedHeader } = await jwtVerify(token, this.#jwks!, {
              issuer,
              typ: 'logout+jwt',
              requiredClaims: ['iat', 'exp', 'jti', 'events'],
            });
            const events = payload.events as Record<string, unknown>;
            assert.deepEqual(events[BACKCHANNEL_LOGOUT_EVENT], {});
            assert.ok(payload.sid !== undefined || payload.sub !== undefined, 'a sid or a sub');
            assert.equal(payload.nonce, undefined, 'no nonce');
            this.tokens.push({ header: protectedHeader, payload });
            response.writeHead(200).end();
          } catch (err) {
            this.refused.push((err as Error).message);
            response.writeHead(400).end();
          }
        })();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
  }

  async stop() {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
