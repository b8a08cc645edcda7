// The device authorization grant's two doors (RFC 8628): POST /oauth2/device_authorization, where a
// device's client asks (form-encoded, answered as the token endpoint answers, no-store), and the
// verification page /device, where a signed-in person types the code (GET: it only looks the code up)
// and allows or denies (POST, with the form token, from our own pages only). A person who is not
// signed in goes through the account's sign-in and comes back here with the code they came with; one
// whose session is short of what the client needs (two factors) steps up and comes back likewise.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Requirement } from '../../authn/requirement.ts';
import type { BrowserSession } from '../../authn/session.ts';
import { authorizeDevice } from '../../oauth/device/authorization.ts';
import { formatUserCode, normalizeUserCode, VERIFICATION_PATH } from '../../oauth/device/user-code.ts';
import { decideDevice, lookUpUserCode, type PendingDevice } from '../../oauth/device/verification.ts';
import { clientVetting } from '../../oauth/registration/trust.ts';
import type { User } from '../../store/users.ts';
import { deviceCodePage, deviceConfirmPage, deviceDonePage } from '../../ui/device-verification.ts';
import type { Text } from '../../ui/layout.ts';
import { clientGuard } from '../client-guard.ts';
import type { RouteContext } from '../context.ts';
import { formParams, formValue, queryValue } from '../forms.ts';
import { csrfFailedPage, sendError, throttledText } from '../outcome.ts';
import { sendPage } from '../pages.ts';
import { requesterOf } from '../requester.ts';
import { signedInSession, stepUpLocation } from '../sign-in.ts';

export function deviceRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const guard = clientGuard(ctx, '/oauth2/device_authorization');
  const deps = { config: ctx.config, store: ctx.store };

  app.post('/oauth2/device_authorization', async (request, reply) => {
    const now = ctx.now();
    const params = formParams(request);
    const answer = await authorizeDevice(deps, request.headers.authorization, params, now, guard(request, now));
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(answer);
  });

  /** Not signed in: the account's sign-in, which comes back here with the code (src/http/browser.ts). */
  function signInFirst(reply: FastifyReply, typed: string | undefined, status: 302 | 303) {
    ctx.browser.verifyAfterSignIn(reply, typed === undefined ? undefined : normalizeUserCode(typed));
    return reply.redirect('/account/login', status);
  }

  /** The code's form again, saying why the code was not taken (with its status). */
  function sendCodePage(reply: FastifyReply, user: User, typed?: string, error?: Text) {
    return sendPage(reply.header('cache-control', 'no-store'), (ui) =>
      deviceCodePage(ui, {
        username: user.username,
        ...(typed !== undefined ? { typed: typed.slice(0, 32) } : {}),
        ...(error ? { error } : {}),
      }),
    );
  }

  /** The typed code looked up (and counted): the pending request, or the page already sent. */
  async function lookUp(request: FastifyRequest, reply: FastifyReply, user: User, typed: string) {
    const found = await lookUpUserCode(deps, { typed, user, requester: requesterOf(request), now: ctx.now() });
    if (found.kind === 'found') return found.pending;
    if (found.kind === 'unknown') return sendCodePage(reply.code(400), user, typed, { key: 'device.unknown' });
    const { refusal } = found;
    reply.code(429).header('retry-after', String(refusal.retryAfter));
    return sendCodePage(reply, user, typed, { ...throttledText(refusal), key: 'mfa.code.throttled' });
  }

  app.get(VERIFICATION_PATH, { config: { html: true } }, async (request, reply) => {
    const typed = queryValue(request, 'user_code');
    const current = await signedInSession(ctx, request);
    if (!current) return signInFirst(reply, typed, 302);
    const { user } = current;
    if (typed === undefined || typed.trim() === '') return sendCodePage(reply, user);
    const pending = await lookUp(request, reply, user, typed);
    if (!isPending(pending)) return pending;
    const csrfToken = ctx.browser.csrfToken(request, reply);
    const page = { ...(await clientRequest(pending, user)), userCode: formatUserCode(pending.userCode), csrfToken };
    return sendPage(reply.header('cache-control', 'no-store'), (ui) => deviceConfirmPage(ui, page));
  });

  app.post(VERIFICATION_PATH, { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const typed = formValue(request, 'user_code') ?? '';
    const current = await signedInSession(ctx, request);
    if (!current) return signInFirst(reply, typed, 303);
    const decision = formValue(request, 'decision');
    if (decision !== 'allow' && decision !== 'deny') {
      return sendError(reply, 'error.consentAnswer.title', { description: 'decision must be allow or deny' });
    }
    const { user, session } = current;
    const pending = await lookUp(request, reply, user, typed);
    if (!isPending(pending)) return pending;
    const input = { pending, session, user, allow: decision === 'allow', requester: requesterOf(request) };
    const decided = await decideDevice(deps, { ...input, now: ctx.now() });
    if (decided === 'approved' || decided === 'denied') {
      const done = { approved: decided === 'approved', clientName: pending.client.name };
      return sendPage(reply.header('cache-control', 'no-store'), (ui) => deviceDonePage(ui, done));
    }
    if (typeof decided === 'object') return stepUp(request, reply, { ...current, pending }, decided.stepUp);
    const why = { gone: 'device.gone', 'not-admin': 'device.notAdmin' } as const;
    return sendCodePage(reply.code(decided === 'gone' ? 409 : 403), user, undefined, { key: why[decided] });
  });

  /**
   * The session's sign-in goes on to the level the client needs (a second factor, or enrolling one),
   * as a step-up at the authorization endpoint does; then back here with the code, to answer again.
   */
  async function stepUp(
    request: FastifyRequest,
    reply: FastifyReply,
    { session, user, pending }: { session: BrowserSession; user: User; pending: PendingDevice },
    need: Requirement,
  ) {
    const up = { session, user, need, resume: null, clientId: pending.client.clientId };
    const location = await stepUpLocation(ctx, request, reply, up);
    if (location === undefined) return sendCodePage(reply.code(403), user, undefined, { key: 'device.needsMfa' });
    ctx.browser.verifyAfterSignIn(reply, pending.userCode);
    return reply.code(303).header('cache-control', 'no-store').redirect(location, 303);
  }

  /** What the client asks, as the consent page shows it. */
  async function clientRequest({ authorization, client }: PendingDevice, user: User) {
    const scopes = authorization.scope
      .split(' ')
      .filter((s) => s !== '')
      .map((name) => ({ name, description: ctx.config.scopes.get(name) ?? name }));
    const api = authorization.resource ? await ctx.store.getResource(authorization.resource) : undefined;
    return {
      clientName: client.name,
      username: user.username,
      scopes,
      vetting: clientVetting(client, null),
      ...(api ? { resource: { name: api.name, uri: api.uri } } : {}),
    };
  }
}

const isPending = (value: PendingDevice | FastifyReply): value is PendingDevice => 'authorization' in value;
