// Answers shared by the browser routes: the outcome of an authorization step, error pages, and the
// sign-in form's fields and its throttled answer (the sign-in itself: src/authn).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthorizeOutcome } from '../oauth/authorize/index.ts';
import type { MessageKey } from '../i18n/index.ts';
import type { Refusal } from '../authn/throttle.ts';
import type { Text } from '../ui/layout.ts';
import { errorPage, loginPage } from '../ui/pages.ts';
import { formValue } from './forms.ts';
import { sendPage } from './pages.ts';
import { logRejection } from './rejections.ts';

/**
 * Sends the outcome of an authorization step; `status` is 302 after GET and 303 after POST. A refusal,
 * shown or sent back to the client, is logged with the client it names (./rejections.ts).
 */
export function sendOutcome(reply: FastifyReply, outcome: AuthorizeOutcome, status: 302 | 303): FastifyReply {
  if (outcome.kind === 'error-page') {
    const { rejected } = outcome;
    return sendError(reply, 'error.authorize.title', rejected, 400, rejected.clientId);
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

/** What an error page says for a protocol error, in words (the code and its description follow it). */
const ERROR_WORDS: Record<string, MessageKey> = {
  invalid_request: 'error.code.invalid_request',
  invalid_client: 'error.code.invalid_client',
  unauthorized_client: 'error.code.unauthorized_client',
  invalid_scope: 'error.code.invalid_scope',
  unsupported_response_type: 'error.code.unsupported_response_type',
  invalid_target: 'error.code.invalid_target',
  temporarily_unavailable: 'error.code.temporarily_unavailable',
  server_error: 'error.code.server_error',
};

/** What an error page says in words for `error`, when the caller has nothing more precise. */
export function errorWords(error: string): Text {
  return { key: ERROR_WORDS[error] ?? 'error.code.other' };
}

/**
 * An error page, logged as a refusal: `invalid_request` unless said otherwise, 400 unless said
 * otherwise. It says `says` (else the error's words), then the code and description for whoever
 * debugs the application; with `says`, the description is for the log only.
 */
export function sendError(
  reply: FastifyReply,
  title: MessageKey,
  {
    error = 'invalid_request',
    description,
    detail,
    says,
  }: { error?: string; description: string; detail?: string | undefined; says?: MessageKey },
  status = 400,
  clientId?: string,
): FastifyReply {
  logRejection(reply.request, { error, description, detail }, clientId);
  const page = says
    ? { title: { key: title }, says: { key: says } }
    : { title: { key: title }, says: errorWords(error), error, description };
  return sendPage(reply.code(status), (ui) => errorPage(ui, page));
}

export function csrfFailedPage(reply: FastifyReply): FastifyReply {
  const description = 'The form was not submitted from this site or has expired. Go back and try again.';
  return sendError(reply, 'error.csrf.title', { description, says: 'error.csrf.says' }, 403);
}

/** The username and password of a sign-in form. */
export function credentials(request: FastifyRequest): [string, string] {
  return [formValue(request, 'username') ?? '', formValue(request, 'password') ?? ''];
}

/** "Try again in 15 minutes": a wait in words, in seconds under two minutes, else in minutes. */
export function throttledText(refusal: Pick<Refusal, 'retryAfter'> & { locked?: boolean }): Text {
  const { retryAfter } = refusal;
  const wait =
    retryAfter < 120 ? { seconds: retryAfter, minutes: 0 } : { seconds: 0, minutes: Math.ceil(retryAfter / 60) };
  return { key: refusal.locked ? 'throttle.locked' : 'throttle.wait', values: wait };
}

/** 429 with Retry-After: the sign-in page again, saying when to try; it says nothing of the password. */
export function sendThrottled(
  reply: FastifyReply,
  page: Omit<Parameters<typeof loginPage>[1], 'error'>,
  refusal: Refusal,
): FastifyReply {
  const error = throttledText(refusal);
  return sendPage(reply.code(429).header('retry-after', String(refusal.retryAfter)), (ui) =>
    loginPage(ui, { ...page, error }),
  );
}

/** The link page of a sign-in through an upstream provider, expired or from another browser. */
export function sendExpiredLink(reply: FastifyReply): FastifyReply {
  return sendError(reply, 'upstream.expired.title', {
    description: 'Linking your account took too long or was started in another browser. Start again.',
    says: 'error.linkExpired.says',
  });
}
