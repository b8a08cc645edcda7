// The admin console's upstream providers (src/ui/admin/providers.ts): the list, a new one (OpenID
// Connect or GitHub, as `tessera providers create` takes them), one changed, and its deletion, which
// asks for a recent sign-in. Each is one of the operations the CLI and the admin API call
// (src/admin/providers.ts), recorded with the admin as its actor; an OpenID Connect provider's
// discovery document is read before it is stored, and one that cannot be read is said on the form.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError } from '../../admin/errors.ts';
import { createProvider, deleteProvider, UpstreamCheckError, updateProvider } from '../../admin/providers.ts';
import {
  type ProviderFields,
  providerFieldsOf,
  providerPage,
  type ProviderPageInput,
  providersPage,
} from '../../ui/admin/providers.ts';
import { callbackUri } from '../../upstream/index.ts';
import { ProviderInputError, type ProviderSettings } from '../../upstream/providers.ts';
import { consoleAdmin, consoleForm, needsRecentSignIn } from '../admin-console.ts';
import type { RouteContext } from '../context.ts';
import { formValue, queryValue } from '../forms.ts';
import { sendPage } from '../pages.ts';

/** The form's fields as posted. */
function postedFields(request: FastifyRequest): ProviderFields {
  const value = (name: string) => (formValue(request, name) ?? '').trim();
  return {
    type: value('type') === 'github' ? 'github' : 'oidc',
    id: value('id'),
    name: value('name'),
    issuer: value('issuer'),
    githubUrl: value('github_url'),
    clientId: value('client_id'),
    scope: value('scope'),
    trustEmail: value('trust_email') === '1',
    linkOnly: value('link_only') === '1',
    allowPrivateNetwork: value('allow_private_network') === '1',
  };
}

/** The settings the operations take: a field left empty is one not given (its default, or unchanged). */
function settingsOf(fields: ProviderFields, clientSecret: string): ProviderSettings {
  const given = (value: string) => (value === '' ? undefined : value);
  return {
    name: given(fields.name),
    issuer: given(fields.issuer),
    githubUrl: given(fields.githubUrl),
    clientId: given(fields.clientId),
    clientSecret: given(clientSecret),
    scopes: given(fields.scope)?.split(/\s+/),
    trustEmail: fields.trustEmail,
    linkOnly: fields.linkOnly,
    allowPrivateNetwork: fields.allowPrivateNetwork,
  };
}

/** A value the operations refuse, or a provider they cannot read: said on the form. */
const refusal = (err: unknown): err is Error =>
  err instanceof AdminError || err instanceof ProviderInputError || err instanceof UpstreamCheckError;

export function adminProviderRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const html = { config: { html: true } };
  const post = { config: { html: true, sameOrigin: true } };
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  const noStore = { 'cache-control': 'no-store' };
  const deps = { config: ctx.config, secret: ctx.mail.secret };
  /** The form again, saying why the operation refused it (400). */
  const refused = (request: FastifyRequest, reply: FastifyReply, page: Omit<ProviderPageInput, 'csrfToken'>) => {
    const input = { ...page, csrfToken: ctx.browser.csrfToken(request, reply) };
    return sendPage(reply.code(400).headers(noStore), (ui) => providerPage(ui, input));
  };

  app.get('/admin/providers', html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const providers = (await ctx.store.listProviders()).sort((a, b) => a.name.localeCompare(b.name));
    const input = { admin: current.admin.username, providers, deleted: queryValue(request, 'deleted') };
    return sendPage(reply.headers(noStore), (ui) => providersPage(ui, input));
  });

  app.get('/admin/providers/new', html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const fields: ProviderFields = {
      ...{ type: 'oidc', id: '', name: '', issuer: '', githubUrl: '', clientId: '', scope: '' },
      ...{ trustEmail: false, linkOnly: false, allowPrivateNetwork: false },
    };
    const input = { admin: current.admin.username, csrfToken: ctx.browser.csrfToken(request, reply), fields };
    return sendPage(reply.headers(noStore), (ui) => providerPage(ui, input));
  });

  app.post('/admin/providers/new', post, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const fields = postedFields(request);
    const settings = { ...settingsOf(fields, formValue(request, 'client_secret') ?? ''), type: fields.type };
    try {
      const options = { now: current.now, requester: current.requester };
      const { provider } = await createProvider(ctx.store, deps, { ...settings, id: fields.id || undefined }, options);
      return reply.redirect(`/admin/providers/${provider.id}?saved=1`, 303);
    } catch (err) {
      if (!refusal(err)) throw err;
      return refused(request, reply, { admin: current.admin.username, fields, problem: err.message });
    }
  });

  app.get('/admin/providers/:id', html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const provider = await ctx.store.getProvider(idOf(request));
    if (!provider) return reply.callNotFound();
    const input = {
      admin: current.admin.username,
      csrfToken: ctx.browser.csrfToken(request, reply),
      provider,
      callbackUri: callbackUri(ctx.config.issuer, provider.id),
      fields: providerFieldsOf(provider),
      saved: queryValue(request, 'saved') === '1',
    };
    return sendPage(reply.headers(noStore), (ui) => providerPage(ui, input));
  });

  app.post('/admin/providers/:id', post, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const provider = await ctx.store.getProvider(idOf(request));
    if (!provider) return reply.callNotFound();
    const fields = { ...postedFields(request), type: provider.type, id: provider.id };
    try {
      const settings = settingsOf(fields, formValue(request, 'client_secret') ?? '');
      const options = { now: current.now, requester: current.requester };
      await updateProvider(ctx.store, deps, provider.id, settings, options);
    } catch (err) {
      if (!refusal(err)) throw err;
      const page = { admin: current.admin.username, provider, fields, problem: err.message };
      return refused(request, reply, { ...page, callbackUri: callbackUri(ctx.config.issuer, provider.id) });
    }
    return reply.redirect(`/admin/providers/${provider.id}?saved=1`, 303);
  });

  app.post('/admin/providers/:id/delete', post, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const again = needsRecentSignIn(ctx, current, reply);
    if (again) return again;
    const provider = await ctx.store.getProvider(idOf(request));
    if (!provider) return reply.callNotFound();
    await deleteProvider(ctx.store, provider.id, { now: current.now, requester: current.requester });
    return reply.redirect(`/admin/providers?${new URLSearchParams({ deleted: provider.id })}`, 303);
  });
}
