// Browser state: the login session cookie and the CSRF cookie (double-submit, HMAC-bound).
import { createHmac, type KeyObject } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { securityEvent } from '../events/index.ts';
import type { BrowserSession } from '../oauth/session.ts';
import type { SessionStore } from '../store/store.ts';
import { hashToken, randomToken, safeEqual } from '../tokens/opaque.ts';
import { purposeKey } from '../tokens/sealed.ts';
import { requesterOf } from './requester.ts';

export const SESSION_COOKIE = 'tessera_session';
export const CSRF_COOKIE = 'tessera_csrf';
/** Which user this browser signed in as before (src/oauth/login.ts counts its failures apart). */
export const DEVICE_COOKIE = 'tessera_device';
/** 400 days: the longest a browser keeps a cookie. */
const DEVICE_MAX_AGE = 400 * 86_400;

export class BrowserState {
  readonly #csrfKey: KeyObject;
  readonly #deviceKey: KeyObject;
  readonly #secure: boolean;
  readonly #store: SessionStore;
  readonly #sessionTtl: number;

  constructor(opts: { secret: string; secure: boolean; store: SessionStore; sessionTtl: number }) {
    this.#csrfKey = purposeKey(opts.secret, 'tessera csrf v1');
    this.#deviceKey = purposeKey(opts.secret, 'tessera device v1');
    this.#secure = opts.secure;
    this.#store = opts.store;
    this.#sessionTtl = opts.sessionTtl;
  }

  #cookieOptions(maxAge?: number) {
    return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: this.#secure, ...(maxAge ? { maxAge } : {}) };
  }

  /** The browser's session with its user; with `clientId`, also what the user consented to for it. */
  async session(request: FastifyRequest, now: number, clientId?: string): Promise<BrowserSession | undefined> {
    const value = request.cookies[SESSION_COOKIE];
    if (!value) return undefined;
    const found = await this.#store.getSessionAndUser(hashToken(value), now, clientId);
    if (!found) return undefined;
    const { session, user, consentedScopes } = found;
    return {
      id: session.id,
      userId: session.user_id,
      authTime: session.auth_time,
      user,
      ...(clientId !== undefined && consentedScopes ? { consented: { clientId, scopes: consentedScopes } } : {}),
    };
  }

  /**
   * A fresh session on every login (no fixation); the previous one of this browser ends. The sign-in
   * is recorded with it (`user.signed_in`), for the client it was for when there is one.
   */
  async startSession(
    request: FastifyRequest,
    reply: FastifyReply,
    userId: string,
    now: number,
    clientId: string | null = null,
  ): Promise<BrowserSession> {
    const previous = request.cookies[SESSION_COOKIE];
    if (previous) await this.#store.deleteSession(hashToken(previous));
    const value = randomToken();
    const id = hashToken(value);
    const signedIn = securityEvent('user.signed_in', now, { userId, clientId, requester: requesterOf(request) });
    await this.#store.createSession(
      { id, user_id: userId, auth_time: now, created_at: now, expires_at: now + this.#sessionTtl },
      signedIn,
    );
    reply.setCookie(SESSION_COOKIE, value, this.#cookieOptions(this.#sessionTtl));
    return { id, userId, authTime: now };
  }

  /** Ends this browser's session (logout), recorded as `user.signed_out` when there was one. */
  async endSession(request: FastifyRequest, reply: FastifyReply, now: number): Promise<void> {
    const value = request.cookies[SESSION_COOKIE];
    const found = value ? await this.#store.getSessionAndUser(hashToken(value), now) : undefined;
    if (found) {
      const userId = found.session.user_id;
      const signedOut = securityEvent('user.signed_out', now, { userId, requester: requesterOf(request) });
      await this.#store.deleteSession(found.session.id, signedOut);
    }
    reply.clearCookie(SESSION_COOKIE, this.#cookieOptions());
  }

  #deviceMac(deviceId: string, username: string): string {
    return createHmac('sha256', this.#deviceKey).update(`${deviceId}\n${username.toLowerCase()}`).digest('base64url');
  }

  /** The device id, when this browser's device cookie says it signed in as `username` before. */
  knownDevice(request: FastifyRequest, username: string): string | undefined {
    const [deviceId, mac] = (request.cookies[DEVICE_COOKIE] ?? '').split('.');
    if (!deviceId || !mac || !username) return undefined;
    return safeEqual(this.#deviceMac(deviceId, username), mac) ? deviceId : undefined;
  }

  /** After a successful sign-in: this browser is a known device of `username` (a signed cookie, 400 days). */
  rememberDevice(request: FastifyRequest, reply: FastifyReply, username: string): void {
    // A new id unless the cookie is already this user's: an id planted by someone else is not reused.
    const deviceId = this.knownDevice(request, username) ?? randomToken(12);
    const value = `${deviceId}.${this.#deviceMac(deviceId, username)}`;
    reply.setCookie(DEVICE_COOKIE, value, this.#cookieOptions(DEVICE_MAX_AGE));
  }

  /** The CSRF token for a form, setting the CSRF cookie when the browser has none. */
  csrfToken(request: FastifyRequest, reply: FastifyReply): string {
    let value = request.cookies[CSRF_COOKIE];
    if (!value) {
      value = randomToken();
      reply.setCookie(CSRF_COOKIE, value, this.#cookieOptions());
    }
    return this.#mac(value);
  }

  checkCsrf(request: FastifyRequest, submitted: string | undefined): boolean {
    const value = request.cookies[CSRF_COOKIE];
    return value !== undefined && submitted !== undefined && safeEqual(this.#mac(value), submitted);
  }

  #mac(value: string): string {
    return createHmac('sha256', this.#csrfKey).update(value).digest('base64url');
  }
}
