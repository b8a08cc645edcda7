// The admin console's clients (src/ui/admin/clients.ts): the list, a new one, one edited (name,
// redirect URIs, scopes, grant types), its secret rotated (the new one shown once, the previous one
// stopping at once), and its deletion, which asks for a recent sign-in. Each change is one of the
// operator's operations the CLI and the admin API call too (src/admin/clients.ts), recorded with the
// admin as its actor.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createClient, deleteClient, rotateClientSecret, updateClient } from '../../admin/clients.ts';
import { AdminError } from '../../admin/errors.ts';
import { sealJwtSecret } from '../../oauth/client-auth/assertion.ts';
import {
  type ClientFields,
  clientPage,
  type ClientPageInput,
  clientSecretPage,
  clientsPage,
  fieldsOf,
} from '../../ui/admin/clients.ts';
import { consoleAdmin, consoleForm, needsRecentSignIn } from '../admin-console.ts';
import type { RouteContext } from '../context.ts';
import { formValue, queryValue } from '../forms.ts';
import { sendPage } from '../pages.ts';

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

export function adminClientRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const html = { config: { html: true } };
  const posted = { config: { html: true, sameOrigin: true } };
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  const sealSecret = (secret: string) => sealJwtSecret(secret, ctx.mail.secret);
  const noStore = { 'cache-control': 'no-store' };
  /** The client's form again, saying why the operation refused it (400). */
  const refused = (request: FastifyRequest, reply: FastifyReply, page: Omit<ClientPageInput, 'csrfToken'>) => {
    const input = { ...page, csrfToken: ctx.browser.csrfToken(request, reply) };
    return sendPage(reply.code(400).headers(noStore), (ui) => clientPage(ui, input));
  };

  app.get('/admin/clients', html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const clients = (await ctx.store.listClients()).sort((a, b) => a.name.localeCompare(b.name));
    const input = { admin: current.admin.username, clients, deleted: queryValue(request, 'deleted') };
    return sendPage(reply.headers(noStore), (ui) => clientsPage(ui, input));
  });

  app.get('/admin/clients/new', html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const fields = { name: '', redirectUris: '', scopes: 'openid', grantTypes: ['authorization_code'], public: false };
    const input = { admin: current.admin.username, csrfToken: ctx.browser.csrfToken(request, reply), fields };
    return sendPage(reply.headers(noStore), (ui) => clientPage(ui, input));
  });

  app.post('/admin/clients/new', posted, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const fields = postedFields(request);
    const input = {
      name: fields.name.trim(),
      redirectUris: words(fields.redirectUris),
      scopes: words(fields.scopes),
      grantTypes: fields.grantTypes,
      public: fields.public,
    };
    try {
      const made = await createClient(ctx.store, ctx.config, input, current.now, current.requester);
      if (made.clientSecret === null)
        return reply.redirect(`/admin/clients/${encodeURIComponent(made.client.clientId)}`, 303);
      const shown = { admin: current.admin.username, client: made.client, secret: made.clientSecret, created: true };
      return sendPage(reply.headers(noStore), (ui) => clientSecretPage(ui, shown));
    } catch (err) {
      if (!refusal(err)) throw err;
      return refused(request, reply, { admin: current.admin.username, fields, problem: err.message });
    }
  });

  app.get('/admin/clients/:id', html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const client = await ctx.store.getClient(idOf(request), { suspended: true });
    if (!client) return reply.callNotFound();
    const csrfToken = ctx.browser.csrfToken(request, reply);
    const saved = queryValue(request, 'saved') === '1';
    const input = { admin: current.admin.username, csrfToken, client, fields: fieldsOf(client), saved };
    return sendPage(reply.headers(noStore), (ui) => clientPage(ui, input));
  });

  app.post('/admin/clients/:id', posted, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const client = await ctx.store.getClient(idOf(request), { suspended: true });
    if (!client) return reply.callNotFound();
    const fields = postedFields(request);
    const changes = {
      name: fields.name,
      redirectUris: words(fields.redirectUris),
      scopes: words(fields.scopes),
      grantTypes: fields.grantTypes,
    };
    try {
      await updateClient(ctx.store, client.clientId, changes, current.now, current.requester, ctx.config);
    } catch (err) {
      if (!refusal(err)) throw err;
      return refused(request, reply, { admin: current.admin.username, client, fields, problem: err.message });
    }
    return reply.redirect(`/admin/clients/${encodeURIComponent(client.clientId)}?saved=1`, 303);
  });

  app.post('/admin/clients/:id/rotate-secret', posted, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const client = await ctx.store.getClient(idOf(request), { suspended: true });
    if (!client) return reply.callNotFound();
    const { now, requester } = current;
    let secret;
    try {
      secret = await rotateClientSecret(ctx.store, client.clientId, now, requester, 0, sealSecret);
    } catch (err) {
      if (!refusal(err)) throw err;
      const page = { admin: current.admin.username, client, fields: fieldsOf(client), problem: err.message };
      return refused(request, reply, page);
    }
    const shown = { admin: current.admin.username, client, secret, created: false };
    return sendPage(reply.headers(noStore), (ui) => clientSecretPage(ui, shown));
  });

  app.post('/admin/clients/:id/delete', posted, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const again = needsRecentSignIn(ctx, current, reply);
    if (again) return again;
    const client = await ctx.store.getClient(idOf(request), { suspended: true });
    if (!client) return reply.callNotFound();
    await deleteClient(ctx.store, client.clientId, { now: current.now, requester: current.requester });
    return reply.redirect(`/admin/clients?${new URLSearchParams({ deleted: client.name })}`, 303);
  });
}
