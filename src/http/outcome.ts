// Answers shared by the browser routes: the outcome of an authorization step, and the refused form.
import type { FastifyReply } from 'fastify';
import type { AuthorizeOutcome } from '../oauth/authorize/index.ts';
import { errorPage } from '../ui/pages.ts';
import { sendHtml } from './plugins/html.ts';

/** Sends the outcome of an authorization step; `status` is 302 after GET and 303 after POST. */
export function sendOutcome(reply: FastifyReply, outcome: AuthorizeOutcome, status: 302 | 303): FastifyReply {
  switch (outcome.kind) {
    case 'error-page':
      return sendHtml(
        reply.code(400),
        errorPage({ title: 'Invalid authorization request', error: outcome.error, description: outcome.description }),
      );
    case 'redirect':
      return reply.code(status).header('cache-control', 'no-store').redirect(outcome.location, status);
    case 'login':
    case 'consent':
      return reply
        .code(status)
        .header('cache-control', 'no-store')
        .redirect(`/${outcome.kind}?interaction=${encodeURIComponent(outcome.interaction)}`, status);
  }
}

export function csrfFailedPage(reply: FastifyReply): FastifyReply {
  return sendHtml(
    reply.code(403),
    errorPage({
      title: 'The form could not be verified',
      error: 'invalid_request',
      description: 'The form was not submitted from this site or has expired. Go back and try again.',
    }),
  );
}
