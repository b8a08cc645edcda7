// /admin/api/v1/users: find, create, read, change and remove users, through the operations the CLI
// calls (src/admin/users.ts, src/admin/roles.ts).
import type { FastifyInstance } from 'fastify';
import { hashPassword } from '../../authn/password/hash.ts';
import { passwordProblem } from '../../authn/password/rules.ts';
import { changeUserRoles } from '../../admin/roles.ts';
import { lockInForce, signInLocks } from '../../admin/sign-in-locks.ts';
import { deleteUser, disableUser, enableUser } from '../../admin/support.ts';
import { findUserById, listUsers, updateUser } from '../../admin/users.ts';
import { createUser } from '../../admin/new-user.ts';
import type { User } from '../../store/users.ts';
import { etagOf } from './etag.ts';
import type { AdminApi } from './context.ts';
import { deleteRoute, objectKind, patchRoute, readRoute } from './object-routes.ts';
import { Problem } from './problems.ts';
import { objectAnswer, pageOf, paramsOf, problems } from './schemas.ts';

export const iso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();

/** A user as the API shows them: never the password's hash, only whether there is one. */
export async function represent(api: AdminApi, user: User) {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    email_verified: user.emailVerified,
    name: user.name,
    given_name: user.givenName,
    family_name: user.familyName,
    disabled: user.disabled,
    locked: lockInForce(await signInLocks(api.store, api.config.throttle, user, api.now())) !== undefined,
    roles: user.roles,
    has_password: user.passwordHash !== null,
    created_at: iso(user.createdAt),
    updated_at: iso(user.updatedAt),
  };
}

export const idParams = paramsOf('id');
const USER = { $ref: 'User#' } as const;
export const userResponse = (status: number, description: string) => ({ [status]: objectAnswer(description, USER) });
const nullableString = { type: ['string', 'null'], maxLength: 256 } as const;
const roles = { type: 'array', items: { type: 'string' }, maxItems: 100 } as const;

const NEW_USER = {
  type: 'object',
  required: ['username', 'email'],
  additionalProperties: false,
  properties: {
    username: { type: 'string' },
    email: { type: 'string' },
    email_verified: { type: 'boolean', default: false, description: "the operator's word that the address is theirs" },
    name: { type: 'string', maxLength: 256 },
    given_name: { type: 'string', maxLength: 256 },
    family_name: { type: 'string', maxLength: 256 },
    password: { type: 'string', maxLength: 1024, description: 'never shown back; without it, no password' },
    roles,
  },
} as const;

/** RFC 7396: the fields given change, a null name clears it, the rest stays. */
const USER_PATCH = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    email: { type: 'string' },
    email_verified: { type: 'boolean' },
    name: nullableString,
    given_name: nullableString,
    family_name: nullableString,
    disabled: { type: 'boolean' },
    roles: { ...roles, description: 'the whole list of roles, replacing the current' },
  },
} as const;

interface NewUser {
  username: string;
  email: string;
  email_verified: boolean;
  name?: string;
  given_name?: string;
  family_name?: string;
  password?: string;
  roles?: string[];
}

interface UserPatch {
  email?: string;
  email_verified?: boolean;
  name?: string | null;
  given_name?: string | null;
  family_name?: string | null;
  disabled?: boolean;
  roles?: string[];
}

export function userRoutes(app: FastifyInstance, api: AdminApi): void {
  const tags = ['users'];
  const users = objectKind<User, 'id'>('users', 'id', USER, {
    find: (id) => findUserById(api.store, id),
    show: (user) => represent(api, user),
  });

  app.get<{ Querystring: { q?: string; limit: number; cursor?: string } }>(
    '/users',
    {
      schema: {
        tags,
        summary: 'Users in username order, those matching q (username, email or name)',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            q: { type: 'string', maxLength: 256 },
            limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
            cursor: { type: 'string', maxLength: 512 },
          },
        },
        response: { 200: pageOf('User'), ...problems(400) },
      },
    },
    async (request) => {
      const { q, limit, cursor } = request.query;
      const page = await listUsers(api.store, { search: q, limit, cursor });
      const items = await Promise.all(page.users.map((user) => represent(api, user)));
      return { items, next_cursor: page.nextCursor };
    },
  );

  app.post<{ Body: NewUser }>(
    '/users',
    {
      schema: {
        tags,
        summary: 'Create a user (the password, if given, is never shown back)',
        body: NEW_USER,
        response: { ...userResponse(201, 'the user, created'), ...problems(400, 409, 415) },
      },
    },
    async (request, reply) => {
      const { body } = request;
      let passwordHash: string | null = null;
      if (body.password !== undefined) {
        const rules = { minLength: api.config.passwordMinLength, username: body.username };
        const problem = passwordProblem(body.password, rules);
        if (problem) throw new Problem(400, 'invalid-request', `password: ${problem}`);
        passwordHash = await hashPassword(body.password);
      }
      const input = {
        username: body.username,
        email: body.email,
        emailVerified: body.email_verified,
        name: body.name,
        givenName: body.given_name,
        familyName: body.family_name,
        passwordHash,
        roles: body.roles ?? [],
      };
      const user = await createUser(api.store, api.config, input, api.now(), api.requester(request));
      const shown = await represent(api, user);
      return reply.code(201).header('location', `${request.url}/${user.id}`).header('etag', etagOf(shown)).send(shown);
    },
  );

  readRoute(app, users, { summary: 'A user', description: 'the user' });

  patchRoute<User, 'id', UserPatch>(app, users, {
    summary: 'Change a user (a JSON merge patch, RFC 7396)',
    body: USER_PATCH,
    problems: [400, 404, 409, 412, 415],
    description: 'the user, changed',
    change: async (current, request) => {
      const now = api.now();
      const requester = api.requester(request);
      const patch = request.body;
      if (patch.email_verified === false && current.emailVerified && patch.email === undefined)
        throw new Problem(
          400,
          'invalid-request',
          'email_verified: an address stops being verified only when it changes',
        );
      const profile = {
        email: patch.email,
        emailVerified: patch.email_verified,
        // A null clears a name, as an empty value does for the CLI.
        name: patch.name === null ? '' : patch.name,
        givenName: patch.given_name === null ? '' : patch.given_name,
        familyName: patch.family_name === null ? '' : patch.family_name,
      };
      let user = (await updateUser(api.store, current.username, profile, { now, requester })).user;
      if (patch.roles !== undefined) {
        const next = patch.roles;
        const changes = { add: next, remove: user.roles.filter((role) => !next.includes(role)) };
        user = (await changeUserRoles(api.store, user.username, changes, { now, requester })).user;
      }
      if (patch.disabled !== undefined && patch.disabled !== user.disabled) {
        await (patch.disabled ? disableUser : enableUser)(api.store, user, { now, requester });
        user = { ...user, disabled: patch.disabled };
      }
      return user;
    },
  });

  deleteRoute(app, users, {
    summary: 'Delete a user, with their sessions, grants, apps and webhooks',
    remove: (current, request) => deleteUser(api.store, current, api.options(request)),
  });
}
