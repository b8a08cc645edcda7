// Answers shared by the browser routes: the outcome of an authorization step, error pages, and the
// sign-in form's fields and its throttled answer (the sign-in itself: src/authn).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthorizeOutcome } from '../oauth/authorize/index.ts';
import type { Refusal } from '../oauth/throttle.ts';
import { errorPage, loginPage } from '../ui/pages.ts';
import { formValue } from './forms.ts';
import { sendHtml } from './plugins/html.ts';
import { logRejection } from './rejections.ts';

/**
 * Sends the outcome of an authorization step; `status` is 302 after GET and 303 after POST. A refusal,
 * shown or sent back to the client, is logged with the client it names (./rejections.ts).
 */
export function sendOutcome(reply: FastifyReply, outcome: AuthorizeOutcome, status: 302 | 303): FastifyReply {
  if (outcome.kind === 'error-page') {
    const { rejected } = outcome;
    return sendError(reply, 'Invalid authorization request', rejected, 400, rejected.clientId);
  }
  if (outcome.kind === 'redirect' && outcome.rejected) {
    logRejection(reply.request, outcome.rejected, outcome.rejected.clientId);
  }
  const location =
    outcome.kind === 'redirect'
      ? outcome.location
      : outcome.kind === 'step'
        ? `/login/${outcome.method}?pending=${encodeURIComponent(outcome.pending)}`
        : `/${outcome.kind}?interaction=${encodeURIComponent(outcome.interaction)}`;
  return reply.code(status).header('cache-control', 'no-store').redirect(location, status);
}

/** An error page, logged as a refusal: `invalid_request` unless said otherwise, 400 unless said otherwise. */
export function sendError(
  reply: FastifyReply,
  title: string,
  { error = 'invalid_request', description, detail }: { error?: string; description: string; detail?: string },
  status = 400,
  clientId?: string,
): FastifyReply {
  logRejection(reply.request, { error, description, detail }, clientId);
  return sendHtml(reply.code(status), errorPage({ title, error, description }));
}

export function csrfFailedPage(reply: FastifyReply): FastifyReply {
  const description = 'The form was not submitted from this site or has expired. Go back and try again.';
  return sendError(reply, 'The form could not be verified', { description }, 403);
}

/** The username and password of a sign-in form. */
export function credentials(request: FastifyRequest): [string, string] {
  return [formValue(request, 'username') ?? '', formValue(request, 'password') ?? ''];
}

/** "Try again in 15 minutes": a wait in words. */
function inWords(seconds: number): string {
  if (seconds < 120) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  return `${Math.ceil(seconds / 60)} minutes`;
}

/** 429 with Retry-After: the sign-in page again, saying when to try; it says nothing of the password. */
export function sendThrottled(
  reply: FastifyReply,
  page: Omit<Parameters<typeof loginPage>[0], 'error'>,
  refusal: Refusal,
): FastifyReply {
  const error = refusal.locked
    ? `Too many failed sign-ins: signing in is locked. Try again in ${inWords(refusal.retryAfter)}.`
    : `Too many failed sign-ins. Try again in ${inWords(refusal.retryAfter)}.`;
  return sendHtml(reply.code(429).header('retry-after', String(refusal.retryAfter)), loginPage({ ...page, error }));
}

/** The link page of a sign-in through an upstream provider, expired or from another browser. */
export function sendExpiredLink(reply: FastifyReply): FastifyReply {
  return sendError(reply, 'This sign-in has expired', {
    description: 'Linking your account took too long or was started in another browser. Start again.',
  });
}
