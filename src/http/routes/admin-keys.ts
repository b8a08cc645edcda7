// The admin console's signing keys (src/ui/admin/keys.ts): listed, and rotated as `tessera keys
// rotate [--now]` does (src/tokens/key-rotation.ts), with the admin as the event's actor. A rotation
// now, which makes a new key sign before relying parties have it, asks for a recent sign-in.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rotateKey } from '../../tokens/key-rotation.ts';
import type { SigningAlg } from '../../tokens/keystore.ts';
import { SIGNING_ALGS } from '../../tokens/keystore.ts';
import { type KeyRotationNote, keysPage } from '../../ui/admin/keys.ts';
import { consoleAdmin, consoleForm, needsRecentSignIn } from '../admin-console.ts';
import type { RouteContext } from '../context.ts';
import { formValue } from '../forms.ts';
import { sendPage } from '../pages.ts';

export function adminKeyRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const posted = { config: { html: true, sameOrigin: true } };

  async function sendKeys(request: FastifyRequest, reply: FastifyReply, admin: string, note?: KeyRotationNote) {
    await ctx.keys.reload();
    const input = { admin, csrfToken: ctx.browser.csrfToken(request, reply), keys: ctx.keys.states(), note };
    return sendPage(reply.header('cache-control', 'no-store'), (ui) => keysPage(ui, input));
  }

  app.get('/admin/keys', { config: { html: true } }, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    return sendKeys(request, reply, current.admin.username);
  });

  for (const emergency of [false, true]) {
    app.post(emergency ? '/admin/keys/rotate-now' : '/admin/keys/rotate', posted, async (request, reply) => {
      const current = await consoleForm(ctx, request, reply);
      if ('sent' in current) return current.sent;
      if (emergency) {
        const again = needsRecentSignIn(ctx, current, reply);
        if (again) return again;
      }
      const alg = formValue(request, 'alg') as SigningAlg;
      if (!SIGNING_ALGS.includes(alg)) return reply.callNotFound();
      const rotation = await rotateKey(ctx.keys, alg, { emergency, requester: current.requester });
      const key = rotation.already ? 'admin.keys.already' : emergency ? 'admin.keys.now' : 'admin.keys.staged';
      return sendKeys(request, reply, current.admin.username, { key, kid: rotation.kid, at: rotation.activatesAt });
    });
  }
}
