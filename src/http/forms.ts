// Reading request parameters: form fields, query values, and an endpoint's form-encoded body.
import type { FastifyRequest } from 'fastify';
import { InvalidRequest } from '../errors/index.ts';
import { type Params, paramsFrom } from '../oauth/params.ts';

export function formValue(request: FastifyRequest, name: string): string | undefined {
  return request.body instanceof URLSearchParams ? (request.body.get(name) ?? undefined) : undefined;
}

export function queryValue(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/** The body of a protocol endpoint that takes application/x-www-form-urlencoded only (RFC 6749 §3.2). */
export function formParams(request: FastifyRequest): Params {
  if (!(request.body instanceof URLSearchParams)) {
    throw new InvalidRequest('the request body must be application/x-www-form-urlencoded');
  }
  return paramsFrom(request.body);
}
