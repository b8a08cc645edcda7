// The routes each object section of the admin console has alike (clients, APIs, providers, webhooks):
// the list, a new one's form and its creation, one's page and its change, and its deletion. Every
// page is sent with `no-store`; every GET comes after `consoleAdmin`, every form after `consoleForm`
// (its form token, then the admin) on a `sameOrigin` route (the Origin checked). What is a section's
// own (how it lists, finds, creates, changes and deletes, and its pages) its file says
// (./admin-clients.ts, ./admin-resources.ts, ./admin-providers.ts, ./admin-webhooks.ts), with the
// routes only it has.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GRACE_PERIODS, type Listing, type ObjectPageInput } from '../../ui/admin/console.ts';
import type { PageContext } from '../../ui/layout.ts';
import { type ConsoleAdmin, consoleAdmin, consoleForm, needsRecentSignIn } from '../admin-console.ts';
import type { RouteContext } from '../context.ts';
import { formValue, queryValue } from '../forms.ts';
import { sendPage } from '../pages.ts';

/** A page to send, once the request's language is known. */
export type Render = (ui: PageContext) => string;

/** What a section's form page shows: a new one's form (no `item`) or one's, as it is or as refused (400). */
export interface SectionFormInput<Item, Fields> extends ObjectPageInput {
  /** The one edited; absent for a new one. */
  item?: Item | undefined;
  fields: Fields;
}

/** What follows a creation: the page to go to (303), or a page to show (a secret shown once). */
export type Created = { location: string } | { page: Render };

/** What is a section's own: its operations and its pages. */
export interface ObjectSection<Item, Fields> {
  /** The list's path (/admin/clients); one's page is at `${path}/:id`, a new one's at `${path}/new`. */
  path: string;
  /** Its objects, in the list's order. */
  list(): Promise<Item[]>;
  /** The list page. */
  listPage(listing: Listing<Item>): Render | Promise<Render>;
  /** One by the id in its path; undefined is a 404. */
  find(id: string): Promise<Item | undefined>;
  /** One's page, where a change goes back to (`?saved=1`). */
  pathOf(item: Item): string;
  /** A new one's form as it first shows. */
  blank: Fields;
  /** One's values as its form shows them. */
  fieldsOf(item: Item): Fields;
  /** The form as posted: a new one's, or a change to `item`. */
  posted(request: FastifyRequest, item?: Item): Fields;
  /** The form page, new or one's. */
  formPage(input: SectionFormInput<Item, Fields>, request: FastifyRequest): Render | Promise<Render>;
  /** The errors of a value the operations refuse: said on the form (400); any other is thrown on. */
  refuses(err: unknown): err is Error;
  /** Creates one from the posted form, with the admin as its actor; a refusal throws (see `refuses`). */
  create(fields: Fields, request: FastifyRequest, current: ConsoleAdmin): Promise<Created>;
  /** Changes `item` as the form was posted, with the admin as its actor; a refusal throws. */
  update(item: Item, fields: Fields, request: FastifyRequest, current: ConsoleAdmin): Promise<void>;
  /** Deletes it; the answer is what the list then says was deleted (its name, id, URI or URL). */
  remove(item: Item, current: ConsoleAdmin): Promise<string>;
  /** Whether deleting one asks for a recent sign-in first (src/authn/recent.ts). */
  deleteAsksRecentSignIn: boolean;
}

/** The order of a list of things with names. */
/** The grace a rotation's form chose: one of the page's choices, anything else none (at once). */
export function postedGrace(request: FastifyRequest): number {
  const asked = Number(formValue(request, 'grace'));
  return GRACE_PERIODS.includes(asked) ? asked : 0;
}

/** Every console page: what it shows is the admin's, never a cache's. */
export const NO_STORE = { 'cache-control': 'no-store' };

export const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);

/** Registers a section's list, new, edit and delete routes. */
export function objectSectionRoutes<Item, Fields>(
  app: FastifyInstance,
  ctx: RouteContext,
  section: ObjectSection<Item, Fields>,
): void {
  const html = { config: { html: true } };
  const post = { config: { html: true, sameOrigin: true } };
  const { path } = section;
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  const noStore = NO_STORE;

  app.get(path, html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const listing = {
      admin: current.admin.username,
      items: await section.list(),
      deleted: queryValue(request, 'deleted'),
    };
    return sendPage(reply.headers(noStore), await section.listPage(listing));
  });

  app.get(`${path}/new`, html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const input = { admin: current.admin.username, csrfToken: ctx.browser.csrfToken(request, reply) };
    return sendPage(reply.headers(noStore), await section.formPage({ ...input, fields: section.blank }, request));
  });

  app.post(`${path}/new`, post, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const fields = section.posted(request);
    let created;
    try {
      created = await section.create(fields, request, current);
    } catch (err) {
      if (!section.refuses(err)) throw err;
      const input = { admin: current.admin.username, csrfToken: ctx.browser.csrfToken(request, reply) };
      const page = await section.formPage({ ...input, fields, problem: err.message }, request);
      return sendPage(reply.code(400).headers(noStore), page);
    }
    if ('location' in created) return reply.redirect(created.location, 303);
    return sendPage(reply.headers(noStore), created.page);
  });

  app.get(`${path}/:id`, html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const item = await section.find(idOf(request));
    if (item === undefined) return reply.callNotFound();
    const input = {
      admin: current.admin.username,
      csrfToken: ctx.browser.csrfToken(request, reply),
      item,
      fields: section.fieldsOf(item),
      saved: queryValue(request, 'saved') === '1',
    };
    return sendPage(reply.headers(noStore), await section.formPage(input, request));
  });

  app.post(`${path}/:id`, post, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const item = await section.find(idOf(request));
    if (item === undefined) return reply.callNotFound();
    const fields = section.posted(request, item);
    try {
      await section.update(item, fields, request, current);
    } catch (err) {
      if (!section.refuses(err)) throw err;
      const input = { admin: current.admin.username, csrfToken: ctx.browser.csrfToken(request, reply), item };
      const page = await section.formPage({ ...input, fields, problem: err.message }, request);
      return sendPage(reply.code(400).headers(noStore), page);
    }
    return reply.redirect(`${section.pathOf(item)}?saved=1`, 303);
  });

  app.post(`${path}/:id/delete`, post, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    if (section.deleteAsksRecentSignIn) {
      const again = needsRecentSignIn(ctx, current, reply);
      if (again) return again;
    }
    const item = await section.find(idOf(request));
    if (item === undefined) return reply.callNotFound();
    const deleted = await section.remove(item, current);
    return reply.redirect(`${path}?${new URLSearchParams({ deleted })}`, 303);
  });
}
