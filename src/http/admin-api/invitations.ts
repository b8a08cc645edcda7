// The mails the admin API sends for people (src/admin/invitations.ts): an invitation (the account made
// without a password, a mail with a link to choose one), the invitation again, a password reset's mail.
import type { FastifyInstance } from 'fastify';
import { inviteNewUser, resendUserInvitation, sendPasswordReset } from '../../admin/invitations.ts';
import { findUserById } from '../../admin/users.ts';
import type { AdminApi } from './context.ts';
import { etagOf } from './etag.ts';
import { noContent, problems } from './schemas.ts';
import { idParams, represent, userResponse } from './users.ts';

export function invitationRoutes(app: FastifyInstance, api: AdminApi): void {
  const tags = ['users'];
  const deps = { config: api.config, secret: api.secret };

  app.post<{ Body: { email: string; username?: string; name?: string } }>(
    '/invitations',
    {
      schema: {
        tags,
        summary: 'Invite a person: the account (username: the address unless given) and a mail to choose a password',
        body: {
          type: 'object',
          required: ['email'],
          additionalProperties: false,
          properties: {
            email: { type: 'string', maxLength: 320 },
            username: { type: 'string', maxLength: 64 },
            name: { type: 'string', maxLength: 256 },
          },
        },
        response: { ...userResponse(201, 'the user invited'), ...problems(400, 409, 415) },
      },
    },
    async (request, reply) => {
      const user = await inviteNewUser(api.store, deps, request.body, api.options(request));
      const shown = await represent(api, user);
      return reply
        .code(201)
        .header('location', `${request.url.replace(/\/invitations$/, '/users')}/${user.id}`)
        .header('etag', etagOf(shown))
        .send(shown);
    },
  );

  /** A route that sends the user a mail (`send`), and answers 204. */
  const mailRoute = (path: string, summary: string, send: typeof sendPasswordReset) =>
    app.post<{ Params: { id: string } }>(
      path,
      { schema: { tags, summary, params: idParams, response: { 204: noContent('sent'), ...problems(400, 404, 409) } } },
      async (request, reply) => {
        const user = await findUserById(api.store, request.params.id);
        await send(api.store, deps, user, api.options(request));
        return reply.code(204).send();
      },
    );

  mailRoute(
    '/users/:id/invitation',
    'Send the invitation again (a new link; the earlier ones stop); 409 once accepted',
    resendUserInvitation,
  );
  mailRoute(
    '/users/:id/password-reset',
    "Send the user a password reset's mail (a link to choose a new password, 30 minutes)",
    sendPasswordReset,
  );
}
