// The admin console's clients (src/ui/admin/clients.ts): the list, a new one, one edited (name,
// redirect URIs, scopes, grant types), its secret rotated (the new one shown once, the previous one
// stopping at once), and its deletion, which asks for a recent sign-in. Each change is one of the
// operator's operations the CLI and the admin API call too (src/admin/clients.ts), recorded with the
// admin as its actor. The routes every section has are set up by ./admin-section.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GRANT_TYPES } from '../../admin/client-rules.ts';
import { createClient, deleteClient, rotateClientSecret, updateClient } from '../../admin/clients.ts';
import { AdminError } from '../../admin/errors.ts';
import { sealJwtSecret } from '../../oauth/client-auth/assertion.ts';
import type { Client } from '../../store/clients.ts';
import { type ClientFields, clientPage, clientSecretPage, clientsPage, fieldsOf } from '../../ui/admin/clients.ts';
import { consoleForm } from '../admin-console.ts';
import type { RouteContext } from '../context.ts';
import { formValue } from '../forms.ts';
import { sendPage } from '../pages.ts';
import { byName, NO_STORE, objectSectionRoutes, postedGrace } from './admin-section.ts';

/** The form's fields as posted. */
function postedFields(request: FastifyRequest): ClientFields {
  const body = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
  return {
    name: formValue(request, 'name') ?? '',
    redirectUris: formValue(request, 'redirect_uris') ?? '',
    scopes: formValue(request, 'scopes') ?? '',
    grantTypes: body.getAll('grant_types'),
    public: formValue(request, 'public') === '1',
  };
}

const words = (text: string) => text.split(/\s+/).filter(Boolean);

/** A value the operations refuse, with a message for the operator. */
const refusal = (err: unknown): err is Error => err instanceof AdminError;

const pathOf = (client: Client) => `/admin/clients/${encodeURIComponent(client.clientId)}`;

export function adminClientRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const sealSecret = (secret: string) => sealJwtSecret(secret, ctx.mail.secret);
  const noStore = NO_STORE;

  objectSectionRoutes<Client, ClientFields>(app, ctx, {
    path: '/admin/clients',
    list: async () => (await ctx.store.listClients()).sort(byName),
    listPage: (listing) => (ui) => clientsPage(ui, listing),
    find: (clientId) => ctx.store.getClient(clientId, { suspended: true }),
    pathOf,
    blank: { name: '', redirectUris: '', scopes: 'openid', grantTypes: ['authorization_code'], public: false },
    fieldsOf,
    posted: postedFields,
    formPage: ({ item, ...input }) => {
      return (ui) => clientPage(ui, { ...input, client: item, grantTypes: GRANT_TYPES });
    },
    refuses: refusal,
    create: async (fields, _request, current) => {
      const input = {
        name: fields.name.trim(),
        redirectUris: words(fields.redirectUris),
        scopes: words(fields.scopes),
        grantTypes: fields.grantTypes,
        public: fields.public,
      };
      const made = await createClient(ctx.store, ctx.config, input, current.now, current.requester);
      if (made.clientSecret === null) return { location: pathOf(made.client) };
      const shown = {
        ...{ admin: current.admin.username, client: made.client, secret: made.clientSecret },
        ...{ created: true, previousUntil: null },
      };
      return { page: (ui) => clientSecretPage(ui, shown) };
    },
    update: async (client, fields, _request, current) => {
      const changes = {
        name: fields.name,
        redirectUris: words(fields.redirectUris),
        scopes: words(fields.scopes),
        grantTypes: fields.grantTypes,
      };
      await updateClient(ctx.store, client.clientId, changes, current.now, current.requester, ctx.config);
    },
    remove: async (client, current) => {
      await deleteClient(ctx.store, client.clientId, { now: current.now, requester: current.requester });
      return client.name;
    },
    deleteAsksRecentSignIn: true,
  });

  app.post('/admin/clients/:id/rotate-secret', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const client = await ctx.store.getClient((request.params as { id: string }).id, { suspended: true });
    if (!client) return reply.callNotFound();
    const { now, requester } = current;
    let rotated;
    try {
      rotated = await rotateClientSecret(ctx.store, client.clientId, now, requester, postedGrace(request), sealSecret);
    } catch (err) {
      if (!refusal(err)) throw err;
      const page = {
        admin: current.admin.username,
        csrfToken: ctx.browser.csrfToken(request, reply),
        client,
        fields: fieldsOf(client),
        grantTypes: GRANT_TYPES,
        problem: err.message,
      };
      return sendPage(reply.code(400).headers(noStore), (ui) => clientPage(ui, page));
    }
    const shown = { admin: current.admin.username, client, ...rotated, created: false };
    return sendPage(reply.headers(noStore), (ui) => clientSecretPage(ui, shown));
  });
}
