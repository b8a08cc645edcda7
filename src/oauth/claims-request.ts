// The claims parameter (OIDC Core §5.5): the individual claims a client asks for, in the ID token
// and at userinfo separately. Kept as the names of the user's claims Tessera holds (others, and
// claims of the protocol, are left out as §5.5 allows) and, for acr, the values asked for, which
// stand for acr_values when the request has none (§5.5.1.1). A request without it does nothing here.
import { InvalidRequest } from '../errors/index.ts';
import { CLAIM_SCOPES } from '../tokens/claims.ts';
import { type Params, single } from './params.ts';

export interface ClaimsRequest {
  /** The user's claims asked for in the ID token. */
  idToken: string[];
  /** The user's claims asked for at userinfo. */
  userinfo: string[];
}

/** How long a claims parameter may be, and how many claims a member may name. */
const MAX_LENGTH = 4096;
const MAX_CLAIMS = 64;

function member(value: unknown, name: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new InvalidRequest(`claims: ${name} must be a JSON object`);
  const entries = Object.entries(value);
  if (entries.length > MAX_CLAIMS) throw new InvalidRequest(`claims: ${name} names too many claims`);
  for (const [claim, request] of entries) {
    if (request === null) continue;
    if (typeof request !== 'object' || Array.isArray(request))
      throw new InvalidRequest(`claims: ${name}.${claim} must be null or a JSON object`);
    const { essential, values } = request as { essential?: unknown; values?: unknown };
    if (essential !== undefined && typeof essential !== 'boolean')
      throw new InvalidRequest(`claims: ${name}.${claim}.essential must be true or false`);
    if (values !== undefined && !Array.isArray(values))
      throw new InvalidRequest(`claims: ${name}.${claim}.values must be an array`);
  }
  return value as Record<string, unknown>;
}

/** The acr values a member asks for (`value` or `values`, strings only), in order; empty when none. */
function acrAsked(request: unknown): string[] {
  if (request === null || typeof request !== 'object') return [];
  const { value, values } = request as { value?: unknown; values?: unknown[] };
  const asked = values ?? (value === undefined ? [] : [value]);
  return asked.filter((v): v is string => typeof v === 'string' && v !== '' && !v.includes(' '));
}

/**
 * The claims parameter of an authorization request, or undefined without one; InvalidRequest when
 * it is not JSON of §5.5's shape. `acrValues`: the acr the id_token member asks with value(s).
 */
export function claimsParam(params: Params): { request: ClaimsRequest; acrValues: string[] } | undefined {
  const raw = single(params, 'claims');
  if (raw === undefined) return undefined;
  if (raw.length > MAX_LENGTH) throw new InvalidRequest(`claims must be at most ${MAX_LENGTH} characters`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new InvalidRequest('claims must be a JSON object');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new InvalidRequest('claims must be a JSON object');
  const { id_token: idToken, userinfo } = parsed as { id_token?: unknown; userinfo?: unknown };
  const forIdToken = member(idToken, 'id_token');
  const forUserinfo = member(userinfo, 'userinfo');
  const held = (asked: Record<string, unknown>) => Object.keys(asked).filter((claim) => CLAIM_SCOPES.has(claim));
  return { request: { idToken: held(forIdToken), userinfo: held(forUserinfo) }, acrValues: acrAsked(forIdToken.acr) };
}

/**
 * The claims of `request` the client may learn: those of the scopes it is registered for. The
 * scopes they fall under are asked for consent alongside the request's own (./authorize).
 */
export function allowedClaims(request: ClaimsRequest, clientScopes: readonly string[]): ClaimsRequest {
  const allowed = (claims: string[]) => claims.filter((claim) => clientScopes.includes(CLAIM_SCOPES.get(claim)!));
  return { idToken: allowed(request.idToken), userinfo: allowed(request.userinfo) };
}

/** The scopes the claims of `request` fall under, for consent. */
export function scopesOfClaims(request: ClaimsRequest | undefined): string[] {
  if (!request) return [];
  return [...new Set([...request.idToken, ...request.userinfo].map((claim) => CLAIM_SCOPES.get(claim)!))];
}

/** The grant's claims_request value: JSON, null when nothing is asked. */
export function serializeClaimsRequest(request: ClaimsRequest | undefined): string | null {
  if (!request || (request.idToken.length === 0 && request.userinfo.length === 0)) return null;
  return JSON.stringify({ id_token: request.idToken, userinfo: request.userinfo });
}

/** A grant's claims_request value read back; undefined for null or anything else. */
export function parseClaimsRequest(raw: string | null | undefined): ClaimsRequest | undefined {
  if (!raw) return undefined;
  try {
    const { id_token: idToken, userinfo } = JSON.parse(raw) as { id_token?: unknown; userinfo?: unknown };
    const names = (v: unknown) => (Array.isArray(v) ? v.filter((c): c is string => CLAIM_SCOPES.has(c as string)) : []);
    return { idToken: names(idToken), userinfo: names(userinfo) };
  } catch {
    return undefined;
  }
}
