// The admin console's APIs (src/ui/admin/resources.ts): the list, a new one, one edited (its name and
// API scopes), and its deletion, which asks for a recent sign-in. Each change is one of the
// operator's operations `tessera resources` and the admin API call too (src/admin/resources.ts),
// recorded with the admin as its actor. The routes are those every section has (./admin-section.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AdminError } from '../../admin/errors.ts';
import { createResource, deleteResource, updateResource } from '../../admin/resources.ts';
import type { Resource } from '../../store/resources.ts';
import { type ResourceFields, resourceFieldsOf, resourcePage, resourcesPage } from '../../ui/admin/resources.ts';
import type { RouteContext } from '../context.ts';
import { formValue } from '../forms.ts';
import { byName, objectSectionRoutes } from './admin-section.ts';

const posted = (request: FastifyRequest): ResourceFields => ({
  uri: (formValue(request, 'uri') ?? '').trim(),
  name: formValue(request, 'name') ?? '',
  scope: formValue(request, 'scope') ?? '',
});

const pathOf = (uri: string) => `/admin/resources/${encodeURIComponent(uri)}`;

export function adminResourceRoutes(app: FastifyInstance, ctx: RouteContext): void {
  objectSectionRoutes<Resource, ResourceFields>(app, ctx, {
    path: '/admin/resources',
    list: async () => (await ctx.store.listResources()).sort(byName),
    listPage: (listing) => (ui) => resourcesPage(ui, listing),
    find: (uri) => ctx.store.getResource(uri),
    pathOf: (resource) => pathOf(resource.uri),
    blank: { uri: '', name: '', scope: '' },
    fieldsOf: resourceFieldsOf,
    // A change keeps the resource's URI, whatever was posted.
    posted: (request, resource) => ({ ...posted(request), ...(resource && { uri: resource.uri }) }),
    formPage: ({ item, ...input }) => {
      return (ui) => resourcePage(ui, { ...input, resource: item });
    },
    refuses: (err): err is Error => err instanceof AdminError,
    create: async (fields, _request, current) => {
      const made = await createResource(ctx.store, ctx.config, fields, {
        now: current.now,
        requester: current.requester,
      });
      return { location: `${pathOf(made.uri)}?saved=1` };
    },
    update: async (resource, fields, _request, current) => {
      const options = { now: current.now, requester: current.requester };
      await updateResource(ctx.store, ctx.config, resource.uri, fields, options);
    },
    remove: async (resource, current) => {
      await deleteResource(ctx.store, resource.uri, { now: current.now, requester: current.requester });
      return resource.uri;
    },
    deleteAsksRecentSignIn: true,
  });
}
