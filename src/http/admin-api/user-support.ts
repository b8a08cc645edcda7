// What a support person does for one user through the admin API: unlock, sign out everywhere, see
// and reset the second factors, see the grants. The operations are src/admin/support.ts's, which the
// CLI and the console call alike.
import type { FastifyInstance } from 'fastify';
import { enrolledMethods } from '../../authn/registry.ts';
import { resetSecondFactors, signOutEverywhere, unlockUser } from '../../admin/support.ts';
import { findUserById } from '../../admin/users.ts';
import type { AdminApi } from './context.ts';
import { problems } from './schemas.ts';
import { idParams, iso, represent, userResponse } from './users.ts';

type ById = { Params: { id: string } };

const object = (properties: Record<string, unknown>) =>
  ({ type: 'object', required: Object.keys(properties), additionalProperties: false, properties }) as const;

export function userSupportRoutes(app: FastifyInstance, api: AdminApi): void {
  const tags = ['users'];

  app.post<ById>(
    '/users/:id/unlock',
    {
      schema: {
        tags,
        summary: "End the lock (or delays) of the user's sign-ins after failures, from every device",
        params: idParams,
        response: { ...userResponse(200, 'the user, unlocked'), ...problems(404) },
      },
    },
    async (request) => {
      const user = await findUserById(api.store, request.params.id);
      await unlockUser(api.store, user, api.options(request));
      return represent(api, user);
    },
  );

  app.post<ById>(
    '/users/:id/sign-out',
    {
      schema: {
        tags,
        summary: "End every session of the user and revoke every grant (each app's tokens stop)",
        params: idParams,
        response: { 200: object({ sessions: { type: 'integer' }, grants: { type: 'integer' } }), ...problems(404) },
      },
    },
    async (request) => {
      const user = await findUserById(api.store, request.params.id);
      const ended = await signOutEverywhere(api.store, user, { ...api.options(request), grants: true });
      return { sessions: ended.sessions, grants: ended.grants };
    },
  );

  app.get<ById>(
    '/users/:id/factors',
    {
      schema: {
        tags,
        summary: 'The ways the user signs in (password, passkey, totp, recovery_code) and their passkeys',
        params: idParams,
        response: {
          200: object({
            methods: { type: 'array', items: { type: 'string' } },
            passkeys: {
              type: 'array',
              items: object({
                id: { type: 'string' },
                name: { type: 'string' },
                created_at: { type: 'string' },
                last_used_at: { type: ['string', 'null'] },
              }),
            },
          }),
          ...problems(404),
        },
      },
    },
    async (request) => {
      const user = await findUserById(api.store, request.params.id);
      const passkeys = (await api.store.listPasskeys(user.id)).map((p) => ({
        id: p.id,
        name: p.name,
        created_at: iso(p.createdAt),
        last_used_at: p.lastUsedAt === null ? null : iso(p.lastUsedAt),
      }));
      return { methods: [...(await enrolledMethods(api.store, user))], passkeys };
    },
  );

  app.post<ById>(
    '/users/:id/reset-second-factors',
    {
      schema: {
        tags,
        summary: 'Remove the authenticator app and recovery codes and end every session (passkeys stay)',
        params: idParams,
        response: {
          200: object({
            totp: { type: 'boolean' },
            recovery_codes: { type: 'integer' },
            sessions: { type: 'integer' },
            passkeys_kept: { type: 'integer' },
          }),
          ...problems(404),
        },
      },
    },
    async (request) => {
      const user = await findUserById(api.store, request.params.id);
      const done = await resetSecondFactors(api.store, user, api.options(request));
      return {
        totp: done.totp,
        recovery_codes: done.recoveryCodes,
        sessions: done.sessions,
        passkeys_kept: done.passkeysKept,
      };
    },
  );

  app.get<ById>(
    '/users/:id/grants',
    {
      schema: {
        tags,
        summary: "The user's active grants, each naming its client",
        params: idParams,
        response: { 200: object({ items: { type: 'array', items: { $ref: 'Grant#' } } }), ...problems(404) },
      },
    },
    async (request) => {
      const user = await findUserById(api.store, request.params.id);
      const grants = await api.store.listActiveGrants(user.id, api.now());
      const items = grants.map((grant) => ({
        id: grant.id,
        client_id: grant.clientId,
        client_name: grant.clientName,
        scope: grant.scope,
        resource: grant.resource,
        created_at: iso(grant.createdAt),
        refresh_expires_at: grant.refreshExpiresAt > 0 ? iso(grant.refreshExpiresAt) : null,
      }));
      return { items };
    },
  );
}
