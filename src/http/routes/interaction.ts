// The login and consent pages. Each POST answers 303 (the page again, the next step, or the client).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { completeConsent, continueAuthorization, scopesNeedingConsent } from '../../oauth/authorize/index.ts';
import { sessionUser } from '../../oauth/session.ts';
import type { Interaction } from '../../oauth/interaction.ts';
import { authenticateUser } from '../../oauth/login.ts';
import { consentPage, errorPage, LOGIN_FAILED, loginPage } from '../../ui/pages.ts';
import type { RouteContext } from '../context.ts';
import { sendHtml } from '../plugins/html.ts';
import { formValue, queryValue } from '../forms.ts';
import { csrfFailedPage, sendOutcome } from '../outcome.ts';

export function interactionRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const deps = { config: ctx.config, store: ctx.store, sealer: ctx.sealer, codes: ctx.codes };

  function expired(reply: FastifyReply): FastifyReply {
    return sendHtml(
      reply.code(400),
      errorPage({
        title: 'This sign-in request has expired',
        error: 'invalid_request',
        description: 'Go back to the application and start again.',
      }),
    );
  }

  async function openInteraction(
    sealed: string | undefined,
  ): Promise<{ interaction: Interaction; clientName: string } | undefined> {
    const interaction = sealed ? ctx.sealer.open(sealed, ctx.now()) : undefined;
    if (!interaction) return undefined;
    const client = await ctx.store.getClient(interaction.request.clientId);
    return client ? { interaction, clientName: client.name } : undefined;
  }

  app.get('/login', { config: { html: true } }, async (request, reply) => {
    const sealed = queryValue(request, 'interaction');
    const opened = await openInteraction(sealed);
    if (!opened || !sealed) return expired(reply);
    const failed = queryValue(request, 'error') === 'login_failed';
    return sendHtml(
      reply,
      loginPage({
        interaction: sealed,
        csrfToken: ctx.browser.csrfToken(request, reply),
        clientName: opened.clientName,
        ...(failed ? { error: LOGIN_FAILED } : {}),
      }),
    );
  });

  app.post('/login', { config: { html: true } }, async (request, reply) => {
    const sealed = formValue(request, 'interaction');
    const opened = await openInteraction(sealed);
    if (!opened || !sealed) return expired(reply);
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const user = await authenticateUser(
      ctx.store,
      formValue(request, 'username') ?? '',
      formValue(request, 'password') ?? '',
    );
    if (!user) {
      request.log.info({ event: 'login_failed' }, 'login failed');
      return reply.redirect(`/login?interaction=${encodeURIComponent(sealed)}&error=login_failed`, 303);
    }
    const now = ctx.now();
    const session = await ctx.browser.startSession(request, reply, user.id, now);
    const client = await ctx.store.getClient(opened.interaction.request.clientId);
    if (!client) return expired(reply);
    // The login asked for (prompt=login included) has now happened.
    const interaction = { ...opened.interaction, forceLogin: false };
    return sendOutcome(reply, await continueAuthorization(deps, client, interaction, session, now), 303);
  });

  app.get('/consent', { config: { html: true } }, async (request, reply) => {
    const sealed = queryValue(request, 'interaction');
    const opened = await openInteraction(sealed);
    if (!opened || !sealed) return expired(reply);
    const now = ctx.now();
    const session = await ctx.browser.session(request, now);
    const user = await sessionUser(ctx.store, session);
    if (!session || !user || user.disabled || session.authTime < opened.interaction.minAuthTime) {
      return reply.redirect(`/login?interaction=${encodeURIComponent(sealed)}`, 302);
    }
    const scopes = await scopesNeedingConsent(ctx.store, session, opened.interaction.request);
    return sendHtml(
      reply,
      consentPage({
        interaction: sealed,
        csrfToken: ctx.browser.csrfToken(request, reply),
        clientName: opened.clientName,
        username: user.username,
        scopes: (scopes.length > 0 ? scopes : opened.interaction.request.scopes).map((name) => ({
          name,
          description: ctx.config.scopes.get(name) ?? name,
        })),
      }),
    );
  });

  app.post('/consent', { config: { html: true } }, async (request, reply) => {
    const sealed = formValue(request, 'interaction');
    const opened = await openInteraction(sealed);
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
      return sendHtml(
        reply.code(400),
        errorPage({ title: 'Invalid answer', error: 'invalid_request', description: 'decision must be allow or deny' }),
      );
    }
    return sendOutcome(
      reply,
      await completeConsent(deps, opened.interaction, session, user, decision === 'allow', now),
      303,
    );
  });
}
