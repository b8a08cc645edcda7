// What the logs may say of a request: its method, its path, and its query with every value that is
// a credential or carries one replaced, by the parameter's name. Headers (Authorization, Cookie) and
// bodies are never logged. The same names are redacted wherever else a URL or a query may reach a
// log line: a message, a field such as a refusal's detail, an error's message and stack.
import type { FastifyRequest } from 'fastify';
import { stdSerializers } from 'pino';

/**
 * Every query parameter whose value is a credential, a token, a sealed value or a link's secret:
 * OAuth's and OIDC's own, and every name under which Tessera's pages, redirects and mails carry one.
 */
const SECRET_PARAMETERS = new Set([
  // OAuth 2.0 and OpenID Connect: codes, tokens, client credentials, assertions and requests.
  'code',
  'code_verifier',
  'id_token_hint',
  'login_hint_token',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'client_secret',
  'client_assertion',
  'assertion',
  'subject_token',
  'actor_token',
  'device_code',
  'user_code',
  'request',
  'request_uri',
  'password',
  // The client's CSRF binding (RFC 6749 §10.12), which it may derive from its own session; and the
  // state of a sign-in through an upstream provider, which ties the provider's answer to this browser.
  'state',
  // Tessera's sealed values: an authorization request waiting for the user, a sign-in between its
  // steps (and a password reset's after its second factor), a sign-in through an upstream provider
  // to link, a sign-out request, an authenticator app being enrolled, a page to go on to.
  'interaction',
  'pending',
  'link',
  'logout',
  'enrolment',
  'continue',
  // A password reset under way (its token's hash); mails' links carry `token`.
  'reset',
  'csrf',
]);

const REDACTED = '[redacted]';

/** The URL with the values of credential parameters replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const question = url.indexOf('?');
  if (question === -1) return url;
  const query = new URLSearchParams(url.slice(question + 1));
  let redacted = false;
  for (const name of new Set(query.keys())) {
    if (SECRET_PARAMETERS.has(name.toLowerCase())) {
      query.set(name, REDACTED);
      redacted = true;
    }
  }
  return redacted ? `${url.slice(0, question)}?${query}` : url;
}

/** `name=value` of a secret parameter anywhere in a text (a URL or a query quoted in a message). */
const IN_TEXT = new RegExp(`([?&;#]|\\b)(${[...SECRET_PARAMETERS].join('|')})(=|%3D)([^&;#\\s"'<>]*)`, 'gi');

/** The text with every secret parameter's value replaced: for what is not a request's URL. */
export function redactText(text: string): string {
  if (!text.includes('=') && !/%3D/i.test(text)) return text;
  return text.replace(IN_TEXT, (_match, before: string, name: string, equals: string) => {
    return `${before}${name}${equals}${REDACTED}`;
  });
}

/** Fastify's request serializer, with the URL redacted. */
export function requestForLog(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/** pino's error serializer, with the message and stack redacted (an error may quote a URL). */
export function errorForLog(err: Error): { [key: string]: unknown; type: string; message: string; stack: string } {
  const serialized = stdSerializers.err(err);
  const redact = (value: unknown) => (typeof value === 'string' ? redactText(value) : value) as string;
  return { ...serialized, message: redact(serialized.message), stack: redact(serialized.stack) };
}

/**
 * pino's `hooks.logMethod`: a line's message and its fields that are strings (a refusal's `detail`,
 * a URL) redacted before they are written. Objects are left to the serializers above.
 */
export function redactLogArguments(args: unknown[]): unknown[] {
  return args.map((arg) => {
    if (typeof arg === 'string') return redactText(arg);
    if (arg === null || typeof arg !== 'object' || arg instanceof Error) return arg;
    let copy: Record<string, unknown> | undefined;
    for (const [key, value] of Object.entries(arg)) {
      if (typeof value !== 'string') continue;
      const redacted = redactText(value);
      if (redacted !== value) (copy ??= { ...(arg as Record<string, unknown>) })[key] = redacted;
    }
    return copy ?? arg;
  });
}
