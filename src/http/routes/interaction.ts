// The login and consent pages. Each POST answers 303 (the page again, the next step, or the client).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { completeConsent, continueAuthorization, scopesNeedingConsent } from '../../oauth/authorize/index.ts';
import { sessionUser } from '../../oauth/session.ts';
import type { Interaction } from '../../oauth/interaction.ts';
import type { Client } from '../../store/clients.ts';
import { type ClientVetting, consentPage, LOGIN_FAILED, loginPage } from '../../ui/pages.ts';
import type { RouteContext } from '../context.ts';
import { sendHtml } from '../plugins/html.ts';
import { formValue, queryValue } from '../forms.ts';
import { credentials, csrfFailedPage, sendError, sendOutcome, sendThrottled, signInFromForm } from '../outcome.ts';
import { requesterOf } from '../requester.ts';

type Opened = { interaction: Interaction; clientName: string; client: Client };

/** What the consent page says of who vouches for the client (src/ui/pages.ts). */
function vettingOf(client: Client, redirectUri: string): ClientVetting {
  const returnHost = URL.parse(redirectUri)?.host || redirectUri;
  if (client.registeredVia === 'document') return { kind: 'document', host: new URL(client.clientId).host, returnHost };
  if (client.registeredVia === 'dynamic') return { kind: 'dynamic', returnHost };
  return { kind: 'operator' };
}

export function interactionRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const deps = { config: ctx.config, store: ctx.store, sealer: ctx.sealer, codes: ctx.codes };

  const expired = (reply: FastifyReply) =>
    sendError(reply, 'This sign-in request has expired', {
      description: 'Go back to the application and start again.',
    });

  /** The interaction, if it is genuine, unexpired, and was started in this browser. */
  async function openInteraction(request: FastifyRequest, sealed: string | undefined): Promise<Opened | undefined> {
    const interaction = sealed ? ctx.sealer.open(sealed, ctx.now()) : undefined;
    if (!interaction || !ctx.browser.isBound(request, interaction.browser)) return undefined;
    const client = await ctx.store.getClient(interaction.request.clientId);
    return client ? { interaction, clientName: client.name, client } : undefined;
  }

  app.get('/login', { config: { html: true } }, async (request, reply) => {
    const sealed = queryValue(request, 'interaction');
    const opened = await openInteraction(request, sealed);
    if (!opened || !sealed) return expired(reply);
    const failed = queryValue(request, 'error') === 'login_failed' ? { error: LOGIN_FAILED } : {};
    const csrfToken = ctx.browser.csrfToken(request, reply);
    return sendHtml(reply, loginPage({ interaction: sealed, csrfToken, clientName: opened.clientName, ...failed }));
  });

  app.post('/login', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const sealed = formValue(request, 'interaction');
    const opened = await openInteraction(request, sealed);
    if (!opened || !sealed) return expired(reply);
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const clientId = opened.interaction.request.clientId;
    const outcome = await signInFromForm(ctx, request, clientId);
    if (outcome.kind === 'refused') {
      const [username] = credentials(request);
      const page = { interaction: sealed, clientName: opened.clientName, username };
      return sendThrottled(reply, { ...page, csrfToken: ctx.browser.csrfToken(request, reply) }, outcome.refusal);
    }
    if (outcome.kind === 'failed') {
      request.log.info({ event: 'login_failed' }, 'login failed');
      return reply.redirect(`/login?interaction=${encodeURIComponent(sealed)}&error=login_failed`, 303);
    }
    const { user } = outcome;
    const now = ctx.now();
    ctx.browser.rememberDevice(request, reply, user.username);
    const session = await ctx.browser.startSession(request, reply, user.id, now, clientId);
    const client = await ctx.store.getClient(opened.interaction.request.clientId);
    if (!client) return expired(reply);
    // The login asked for (prompt=login included) has now happened.
    const interaction = { ...opened.interaction, forceLogin: false };
    return sendOutcome(reply, await continueAuthorization(deps, client, interaction, session, now), 303);
  });

  app.get('/consent', { config: { html: true } }, async (request, reply) => {
    const sealed = queryValue(request, 'interaction');
    const opened = await openInteraction(request, sealed);
    if (!opened || !sealed) return expired(reply);
    const now = ctx.now();
    const session = await ctx.browser.session(request, now);
    const user = await sessionUser(ctx.store, session);
    if (!session || !user || user.disabled || session.authTime < opened.interaction.minAuthTime) {
      return reply.redirect(`/login?interaction=${encodeURIComponent(sealed)}`, 302);
    }
    const missing = await scopesNeedingConsent(ctx.store, session, opened.interaction.request);
    const asked = missing.length > 0 ? missing : opened.interaction.request.scopes;
    const scopes = asked.map((name) => ({ name, description: ctx.config.scopes.get(name) ?? name }));
    const { request: asking } = opened.interaction;
    const vetting = vettingOf(opened.client, asking.redirectUri);
    const api = asking.resource ? await ctx.store.getResource(asking.resource) : undefined;
    const resource = api ? { resource: { name: api.name, uri: api.uri } } : {};
    const page = {
      interaction: sealed,
      clientName: opened.clientName,
      username: user.username,
      scopes,
      vetting,
      ...resource,
    };
    return sendHtml(reply, consentPage({ ...page, csrfToken: ctx.browser.csrfToken(request, reply) }));
  });

  app.post('/consent', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const sealed = formValue(request, 'interaction');
    const opened = await openInteraction(request, sealed);
    if (!opened || !sealed) return expired(reply);
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const now = ctx.now();
    const session = await ctx.browser.session(request, now);
    const user = await sessionUser(ctx.store, session);
    if (!session || !user || user.disabled || session.authTime < opened.interaction.minAuthTime) {
      return reply.redirect(`/login?interaction=${encodeURIComponent(sealed)}`, 303);
    }
    const decision = formValue(request, 'decision');
    if (decision !== 'allow' && decision !== 'deny') {
      return sendError(reply, 'Invalid answer', { description: 'decision must be allow or deny' });
    }
    const allow = decision === 'allow';
    const outcome = await completeConsent(deps, opened.interaction, session, user, allow, now, requesterOf(request));
    return sendOutcome(reply, outcome, 303);
  });
}
