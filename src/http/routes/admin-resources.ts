// The admin console's APIs (src/ui/admin/resources.ts): the list, a new one, one edited (its name and
// API scopes), and its deletion, which asks for a recent sign-in. Each change is one of the
// operator's operations `tessera resources` and the admin API call too (src/admin/resources.ts),
// recorded with the admin as its actor.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError } from '../../admin/errors.ts';
import { createResource, deleteResource, updateResource } from '../../admin/resources.ts';
import {
  type ResourceFields,
  resourceFieldsOf,
  resourcePage,
  type ResourcePageInput,
  resourcesPage,
} from '../../ui/admin/resources.ts';
import { consoleAdmin, consoleForm, needsRecentSignIn } from '../admin-console.ts';
import type { RouteContext } from '../context.ts';
import { formValue, queryValue } from '../forms.ts';
import { sendPage } from '../pages.ts';

const posted = (request: FastifyRequest): ResourceFields => ({
  uri: (formValue(request, 'uri') ?? '').trim(),
  name: formValue(request, 'name') ?? '',
  scope: formValue(request, 'scope') ?? '',
});

export function adminResourceRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const html = { config: { html: true } };
  const post = { config: { html: true, sameOrigin: true } };
  const uriOf = (request: FastifyRequest) => (request.params as { uri: string }).uri;
  const noStore = { 'cache-control': 'no-store' };
  const pathOf = (uri: string) => `/admin/resources/${encodeURIComponent(uri)}`;
  /** The form again, saying why the operation refused it (400). */
  const refused = (request: FastifyRequest, reply: FastifyReply, page: Omit<ResourcePageInput, 'csrfToken'>) => {
    const input = { ...page, csrfToken: ctx.browser.csrfToken(request, reply) };
    return sendPage(reply.code(400).headers(noStore), (ui) => resourcePage(ui, input));
  };

  app.get('/admin/resources', html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const resources = (await ctx.store.listResources()).sort((a, b) => a.name.localeCompare(b.name));
    const input = { admin: current.admin.username, resources, deleted: queryValue(request, 'deleted') };
    return sendPage(reply.headers(noStore), (ui) => resourcesPage(ui, input));
  });

  app.get('/admin/resources/new', html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const fields = { uri: '', name: '', scope: '' };
    const input = { admin: current.admin.username, csrfToken: ctx.browser.csrfToken(request, reply), fields };
    return sendPage(reply.headers(noStore), (ui) => resourcePage(ui, input));
  });

  app.post('/admin/resources/new', post, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const fields = posted(request);
    try {
      const options = { now: current.now, requester: current.requester };
      const made = await createResource(ctx.store, ctx.config, fields, options);
      return reply.redirect(`${pathOf(made.uri)}?saved=1`, 303);
    } catch (err) {
      if (!(err instanceof AdminError)) throw err;
      return refused(request, reply, { admin: current.admin.username, fields, problem: err.message });
    }
  });

  app.get('/admin/resources/:uri', html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const resource = await ctx.store.getResource(uriOf(request));
    if (!resource) return reply.callNotFound();
    const input = {
      admin: current.admin.username,
      csrfToken: ctx.browser.csrfToken(request, reply),
      resource,
      fields: resourceFieldsOf(resource),
      saved: queryValue(request, 'saved') === '1',
    };
    return sendPage(reply.headers(noStore), (ui) => resourcePage(ui, input));
  });

  app.post('/admin/resources/:uri', post, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const resource = await ctx.store.getResource(uriOf(request));
    if (!resource) return reply.callNotFound();
    const fields = { ...posted(request), uri: resource.uri };
    try {
      const options = { now: current.now, requester: current.requester };
      await updateResource(ctx.store, ctx.config, resource.uri, fields, options);
    } catch (err) {
      if (!(err instanceof AdminError)) throw err;
      return refused(request, reply, { admin: current.admin.username, resource, fields, problem: err.message });
    }
    return reply.redirect(`${pathOf(resource.uri)}?saved=1`, 303);
  });

  app.post('/admin/resources/:uri/delete', post, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const again = needsRecentSignIn(ctx, current, reply);
    if (again) return again;
    const resource = await ctx.store.getResource(uriOf(request));
    if (!resource) return reply.callNotFound();
    await deleteResource(ctx.store, resource.uri, { now: current.now, requester: current.requester });
    return reply.redirect(`/admin/resources?${new URLSearchParams({ deleted: resource.uri })}`, 303);
  });
}
