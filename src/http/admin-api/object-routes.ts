// The routes every kind of object the admin API manages has at its own path (/clients/:client_id,
// /users/:id, …): read it with its ETag, change it with a JSON merge patch, delete it, the last two
// under If-Match (./etag.ts). Each kind's file says how to find and show its objects and what a change
// or a delete does; the schemas, the 404 and 412 and the ETag handling are written here once.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkIfMatch, etagOf } from './etag.ts';
import { IF_MATCH, mergePatch, noContent, objectAnswer, paramsOf, problems } from './schemas.ts';

/** One kind of object at its own path: `T` as stored, named by the path parameter `P`. */
export interface ObjectKind<T, P extends string> {
  /** The path of one object, e.g. '/webhooks/:id'. */
  path: string;
  /** The path parameter naming the object, e.g. 'id'. */
  param: P;
  /** The OpenAPI tags of its routes. */
  tags: string[];
  /** The JSON Schema of its representation. */
  schema: object;
  /** The object named in the path; a NotFoundError (404) when there is none. */
  find(name: string): Promise<T>;
  /** Its representation: what a read answers, and what its ETag is of. */
  show(object: T): unknown;
}

/**
 * The kind of object at `/<collection>/:<param>`, its routes tagged `collection` in the OpenAPI
 * document: how to find one by the path's name, and how to show it.
 */
export function objectKind<T, P extends string>(
  collection: string,
  param: P,
  schema: object,
  how: Pick<ObjectKind<T, P>, 'find' | 'show'>,
): ObjectKind<T, P> {
  return { path: `/${collection}/:${param}`, param, tags: [collection], schema, find: how.find, show: how.show };
}

type ByName<P extends string> = { Params: Record<P, string> };

/** The object's name in the request's path (the route's schema requires it). */
function nameIn<P extends string>(request: FastifyRequest<ByName<P>>, param: P): string {
  return (request.params as Record<P, string>)[param];
}

/** What the schema of every route at the object's path starts with. */
function atObject<P extends string>(kind: ObjectKind<unknown, P>, summary: string) {
  return { tags: kind.tags, summary, params: paramsOf(kind.param) };
}

/**
 * The object named in the request's path, as the caller last read it: a NotFoundError (404) when
 * there is none, a 412 when If-Match names none of its current ETags.
 */
export async function findUnchanged<T, P extends string>(
  kind: ObjectKind<T, P>,
  request: FastifyRequest<ByName<P>>,
): Promise<T> {
  const current = await kind.find(nameIn(request, kind.param));
  checkIfMatch(request, await kind.show(current));
  return current;
}

/** GET the object's path: its representation and ETag, or 404. */
export function readRoute<T, P extends string>(
  app: FastifyInstance,
  kind: ObjectKind<T, P>,
  route: { summary: string; description: string },
): void {
  app.get<ByName<P>>(
    kind.path,
    {
      schema: {
        ...atObject(kind, route.summary),
        response: { 200: objectAnswer(route.description, kind.schema), ...problems(404) },
      },
    },
    async (request, reply) => {
      const shown = await kind.show(await kind.find(nameIn(request, kind.param)));
      return reply.header('etag', etagOf(shown)).send(shown);
    },
  );
}

/**
 * PATCH the object's path with a JSON merge patch of the schema `body`: `change` makes the change to
 * the object as it is (after If-Match) and gives it back as changed, answered with its new ETag.
 */
export function patchRoute<T, P extends string, Body>(
  app: FastifyInstance,
  kind: ObjectKind<T, P>,
  route: {
    summary: string;
    body: object;
    /** The problems it may answer with besides 401, 403 and 503. */
    problems: number[];
    /** What its 200 says; 'changed' unless given. */
    description?: string;
    change(current: T, request: FastifyRequest<ByName<P> & { Body: Body }>): Promise<T>;
  },
): void {
  app.patch<ByName<P> & { Body: Body }>(
    kind.path,
    {
      schema: {
        ...atObject(kind, route.summary),
        headers: IF_MATCH,
        body: mergePatch(route.body),
        response: { 200: objectAnswer(route.description ?? 'changed', kind.schema), ...problems(...route.problems) },
      },
    },
    async (request, reply) => {
      const current = await findUnchanged(kind, request);
      const shown = await kind.show(await route.change(current, request));
      return reply.header('etag', etagOf(shown)).send(shown);
    },
  );
}

/** DELETE the object's path (after If-Match): `remove` does it; 204. */
export function deleteRoute<T, P extends string>(
  app: FastifyInstance,
  kind: ObjectKind<T, P>,
  route: {
    summary: string;
    /** What its 204 says; 'deleted' unless given. */
    description?: string;
    remove(current: T, request: FastifyRequest<ByName<P>>): Promise<unknown>;
  },
): void {
  app.delete<ByName<P>>(
    kind.path,
    {
      schema: {
        ...atObject(kind, route.summary),
        headers: IF_MATCH,
        response: { 204: noContent(route.description ?? 'deleted'), ...problems(404, 412) },
      },
    },
    async (request, reply) => {
      await route.remove(await findUnchanged(kind, request), request);
      return reply.code(204).send();
    },
  );
}
