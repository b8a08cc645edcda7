// Browser state: the login session cookie, the forms' anti-CSRF tokens and the browser's binding.
//
// A form's token is an HMAC under a key of TESSERA_SECRET's of the browser's session cookie when it
// has one, and before sign-in of a pre-session cookie that sign-in and sign-out replace (OWASP's
// signed double submit): a pair someone else minted and planted in this browser matches nothing
// once the user is signed in. Sealed sign-in, consent and sign-out requests carry a hash of the
// browser cookie they were started in, and are refused in another browser. With an https issuer
// the cookies are `__Host-` prefixed (Secure, Path=/, no Domain: no sibling subdomain or plain-http
// page can set them).
import { createHmac, type KeyObject } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { securityEvent } from '../events/index.ts';
import {
  type BrowserSession,
  createSession,
  type SessionWrite,
  type SignedIn,
  toBrowserSession,
} from '../authn/session.ts';
import { formatUserCode, VERIFICATION_PATH } from '../oauth/device/user-code.ts';
import type { Session, SessionStore } from '../store/sessions.ts';
import { hashToken, randomToken, safeEqual } from '../tokens/opaque.ts';
import { macMatches, purposeKeys } from '../tokens/sealed.ts';
import type { Secrets } from '../tokens/secrets.ts';
import { requesterOf } from './requester.ts';

export const SESSION_COOKIE = 'tessera_session';
/** The pre-session value the forms' tokens derive from before sign-in. */
export const CSRF_COOKIE = 'tessera_csrf';
/** Which user this browser signed in as before (src/authn/password/check.ts counts its failures apart). */
export const DEVICE_COOKIE = 'tessera_device';
/** A random id of this browser, which sealed interactions and sign-out requests are bound to. */
export const BROWSER_COOKIE = 'tessera_browser';
/**
 * Where a sign-in from the account's sign-in page goes on to instead of the account page: the device
 * verification page (RFC 8628 §3.3), with the user code it was opened with, for ten minutes.
 */
export const VERIFY_COOKIE = 'tessera_verify';
const VERIFY_MAX_AGE = 600;
/** A user code in its canonical form (src/oauth/device/user-code.ts), or nothing. */
const VERIFY_VALUE = /^[A-Z]{8}$|^$/;
/** 400 days: the longest a browser keeps a cookie. */
const DEVICE_MAX_AGE = 400 * 86_400;

const deviceBody = (deviceId: string, username: string) => `${deviceId}\n${username.toLowerCase()}`;

export class BrowserState {
  /** Per secret of the keyring, newest first: tokens and cookies are made under the first. */
  readonly #csrfKeys: KeyObject[];
  readonly #deviceKeys: KeyObject[];
  readonly #secure: boolean;
  readonly #store: SessionStore;
  readonly #sessionTtl: number;
  /** The cookies' names: `__Host-` prefixed over https. */
  readonly names: { session: string; csrf: string; device: string; browser: string; verify: string };

  constructor(opts: { secret: Secrets; secure: boolean; store: SessionStore; sessionTtl: number }) {
    this.#csrfKeys = purposeKeys(opts.secret, 'tessera csrf v2');
    this.#deviceKeys = purposeKeys(opts.secret, 'tessera device v1');
    this.#secure = opts.secure;
    this.#store = opts.store;
    this.#sessionTtl = opts.sessionTtl;
    const prefix = opts.secure ? '__Host-' : '';
    this.names = {
      session: `${prefix}${SESSION_COOKIE}`,
      csrf: `${prefix}${CSRF_COOKIE}`,
      device: `${prefix}${DEVICE_COOKIE}`,
      browser: `${prefix}${BROWSER_COOKIE}`,
      verify: `${prefix}${VERIFY_COOKIE}`,
    };
  }

  #cookieOptions(maxAge?: number) {
    return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: this.#secure, ...(maxAge ? { maxAge } : {}) };
  }

  /** The browser's session with its user; with `clientId`, also what the user consented to for it. */
  async session(request: FastifyRequest, now: number, clientId?: string): Promise<BrowserSession | undefined> {
    const value = request.cookies[this.names.session];
    if (!value) return undefined;
    const found = await this.#store.getSessionAndUser(hashToken(value), now, clientId);
    return found && toBrowserSession(found, clientId);
  }

  /**
   * A fresh session on every sign-in, a step-up's too (no fixation); the previous one of this browser
   * ends. The same person's (a step-up, prompt=login) is replaced: the new session keeps its `sid`, as
   * node-oidc-provider keeps a session's across a new login of its account, so the clients signed in
   * from it stay signed in from the new one and hear of its end. Someone else's is signed out, and its
   * clients are told (Back-Channel Logout 1.0). The sign-in is recorded with it (`user.signed_in`), for
   * the client it was for when there is one.
   * `write` stores it with more (../authn/session.ts SessionWrite): undefined, and nothing changed, when
   * that did not store it.
   */
  async startSession(
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    now: number,
    clientId: string | null = null,
    write?: SessionWrite,
  ): Promise<BrowserSession | undefined> {
    const value = randomToken();
    const { userId } = signedIn;
    const previous = request.cookies[this.names.session];
    const before = previous ? await this.#store.getSessionAndUser(hashToken(previous), now) : undefined;
    const same = before?.session.userId === userId;
    const event = securityEvent('user.signed_in', now, { userId, clientId, requester: requesterOf(request) });
    const input = { id: hashToken(value), signedIn, now, ttl: this.#sessionTtl, sid: same ? before.session.sid : null };
    const session = await createSession(this.#store, input, event, write);
    if (!session) return undefined;
    if (before && !same) await this.#signOut(request, before.session, now);
    else if (previous) await this.#store.deleteSession(hashToken(previous));
    reply.setCookie(this.names.session, value, this.#cookieOptions(this.#sessionTtl));
    // The forms' tokens now derive from the new session; the pre-session value is replaced too.
    reply.setCookie(this.names.csrf, randomToken(), this.#cookieOptions());
    return session;
  }

  /** Ends this browser's session (logout), recorded as `user.signed_out` when there was one: that one. */
  async endSession(request: FastifyRequest, reply: FastifyReply, now: number): Promise<Session | undefined> {
    const value = request.cookies[this.names.session];
    const found = value ? await this.#store.getSessionAndUser(hashToken(value), now) : undefined;
    if (found) await this.#signOut(request, found.session, now);
    reply.clearCookie(this.names.session, this.#cookieOptions());
    reply.setCookie(this.names.csrf, randomToken(), this.#cookieOptions());
    return found?.session;
  }

  /** Ends `session`, recorded as `user.signed_out`; the clients signed in from it are told, in the same write. */
  async #signOut(request: FastifyRequest, session: Session, now: number): Promise<void> {
    const signedOut = securityEvent('user.signed_out', now, {
      userId: session.userId,
      requester: requesterOf(request),
    });
    await this.#store.deleteSession(session.id, signedOut, { now });
  }

  /** The device verification page is where the next account sign-in goes on to, with `userCode` (canonical) if any. */
  verifyAfterSignIn(reply: FastifyReply, userCode: string | undefined): void {
    reply.setCookie(this.names.verify, userCode ?? '', this.#cookieOptions(VERIFY_MAX_AGE));
  }

  /** Where an account sign-in goes on to: the verification page it was started from, once, else the account page. */
  afterAccountSignIn(request: FastifyRequest, reply: FastifyReply): string {
    const value = request.cookies[this.names.verify];
    if (value === undefined) return '/account';
    reply.clearCookie(this.names.verify, this.#cookieOptions());
    if (!VERIFY_VALUE.test(value)) return '/account';
    return value === '' ? VERIFICATION_PATH : `${VERIFICATION_PATH}?user_code=${formatUserCode(value)}`;
  }

  /** The device cookie's MAC under the newest secret. */
  #deviceMac(deviceId: string, username: string): string {
    return createHmac('sha256', this.#deviceKeys[0]!).update(deviceBody(deviceId, username)).digest('base64url');
  }

  /** The device id, when this browser's device cookie says it signed in as `username` before. */
  knownDevice(request: FastifyRequest, username: string): string | undefined {
    const [deviceId, mac] = (request.cookies[this.names.device] ?? '').split('.');
    if (!deviceId || !mac || !username) return undefined;
    // A cookie signed under a previous secret still counts, until the secret leaves the keyring.
    return macMatches(this.#deviceKeys, deviceBody(deviceId, username), mac) ? deviceId : undefined;
  }

  /** After a successful sign-in: this browser is a known device of `username` (a signed cookie, 400 days). */
  rememberDevice(request: FastifyRequest, reply: FastifyReply, username: string): void {
    // A new id unless the cookie is already this user's: an id planted by someone else is not reused.
    const deviceId = this.knownDevice(request, username) ?? randomToken(12);
    const value = `${deviceId}.${this.#deviceMac(deviceId, username)}`;
    reply.setCookie(this.names.device, value, this.#cookieOptions(DEVICE_MAX_AGE));
  }

  /**
   * The token for a form: derived from the session cookie when the browser has one, else from the
   * pre-session cookie (set now when the browser has none).
   */
  csrfToken(request: FastifyRequest, reply: FastifyReply): string {
    const session = request.cookies[this.names.session];
    if (session) return this.#mac('session', session);
    let value = request.cookies[this.names.csrf];
    if (!value) {
      value = randomToken();
      reply.setCookie(this.names.csrf, value, this.#cookieOptions());
    }
    return this.#mac('pre-session', value);
  }

  /**
   * Whether `submitted` is the token this browser's forms carry now: made under the newest secret, or
   * under a previous one by a page shown before a rotation.
   */
  checkCsrf(request: FastifyRequest, submitted: string | undefined): boolean {
    if (submitted === undefined) return false;
    const session = request.cookies[this.names.session];
    const pre = request.cookies[this.names.csrf];
    const body = session ? `session\n${session}` : pre ? `pre-session\n${pre}` : undefined;
    return body !== undefined && macMatches(this.#csrfKeys, body, submitted);
  }

  #mac(kind: string, value: string): string {
    return createHmac('sha256', this.#csrfKeys[0]!).update(`${kind}\n${value}`).digest('base64url');
  }

  /**
   * This browser's binding for a sealed interaction or sign-out request: a hash of its browser
   * cookie, which is set now when it has none (only when something is sealed, never per token request).
   */
  binding(request: FastifyRequest, reply: FastifyReply): string {
    let value = request.cookies[this.names.browser];
    if (!value) {
      value = randomToken();
      request.cookies[this.names.browser] = value;
      reply.setCookie(this.names.browser, value, this.#cookieOptions());
    }
    return hashToken(value).slice(0, 32);
  }

  /** Whether a sealed value bound to `bound` was started in this browser. */
  isBound(request: FastifyRequest, bound: string | undefined): boolean {
    const value = request.cookies[this.names.browser];
    return bound !== undefined && value !== undefined && safeEqual(hashToken(value).slice(0, 32), bound);
  }
}
