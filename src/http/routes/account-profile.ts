// The account page's profile form (POST /account/profile): the claims a person owns, changed by
// src/account/profile.ts; the page again with the field refused, or back to it saying so.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PROFILE_FIELDS, type ProfileField, updateOwnProfile } from '../../account/profile.ts';
import type { BrowserSession } from '../../authn/session.ts';
import type { User } from '../../store/users.ts';
import { parseHeldClaims } from '../../tokens/held-claims.ts';
import type { ProfileSection } from '../../ui/profile.ts';
import type { RouteContext } from '../context.ts';
import { formValue } from '../forms.ts';
import { accountForm } from '../sign-in.ts';

/** The form's values for `user`: the names from their columns, the rest from their held claims. */
export function profileValues(user: User): ProfileSection['values'] {
  const held = user.claims ? parseHeldClaims(user.claims) : {};
  const values: ProfileSection['values'] = {};
  for (const field of PROFILE_FIELDS) {
    const value = field === 'given_name' ? user.givenName : field === 'family_name' ? user.familyName : held[field];
    if (typeof value === 'string') values[field] = value;
  }
  return values;
}

export function accountProfileRoutes(
  app: FastifyInstance,
  ctx: RouteContext,
  sendAccount: (
    request: FastifyRequest,
    reply: FastifyReply,
    current: { session: BrowserSession; user: User },
    profile: ProfileSection,
  ) => Promise<FastifyReply>,
): void {
  app.post('/account/profile', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const current = await accountForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const fields: Partial<Record<ProfileField, string>> = {};
    for (const field of PROFILE_FIELDS) {
      const value = formValue(request, field);
      if (value !== undefined) fields[field] = value;
    }
    const { user, requester, now } = current;
    const outcome = await updateOwnProfile(ctx.store, { user, fields, requester, now });
    if (outcome.kind === 'saved') return reply.redirect('/account?profile=saved#profile', 303);
    const values = { ...profileValues(user), ...fields };
    return sendAccount(request, reply.code(400), current, { values, invalid: outcome.field });
  });
}
