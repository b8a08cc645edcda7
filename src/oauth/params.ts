// Request parameters as a multimap, so repeated parameters can be rejected (RFC 6749 §3.1, §3.2).
import { InvalidRequest } from '../errors/index.ts';

export type Params = ReadonlyMap<string, readonly string[]>;

export function paramsFrom(search: URLSearchParams): Params {
  const params = new Map<string, string[]>();
  for (const [key, value] of search) {
    const list = params.get(key);
    if (list) list.push(value);
    else params.set(key, [value]);
  }
  return params;
}

/** RFC 6749 §3.1: "Request and response parameters MUST NOT be included more than once." */
export function rejectDuplicates(params: Params, names?: readonly string[]): void {
  for (const [name, values] of params) {
    if (values.length > 1 && (!names || names.includes(name))) {
      throw new InvalidRequest('a parameter is included more than once', `repeated: ${JSON.stringify(name)}`);
    }
  }
}

/** One value, with empty values treated as absent (RFC 6749 §3.1). */
export function single(params: Params, name: string): string | undefined {
  const value = params.get(name)?.[0];
  return value === undefined || value === '' ? undefined : value;
}

/** A parameter the request must carry: its one value, else invalid_request (RFC 6749 §5.2). */
export function required(params: Params, name: string): string {
  const value = single(params, name);
  if (!value) throw new InvalidRequest(`${name} is required`);
  return value;
}
