// Resource indicators (RFC 8707): a client names the API it wants an access token for, and the token
// is then audience-restricted to it (`aud` = the API's URI) and carries only the scopes that API
// accepts. APIs are registered by the operator (`tessera resources create`). Tessera issues tokens
// for one resource per request: a grant authorized for a resource gives tokens for it alone; a grant
// authorized without one gives tokens for the default audience, or, narrowed at the token endpoint,
// for any registered resource (with the grant's scopes that resource accepts).
import { InvalidScope, InvalidTarget } from '../errors/index.ts';
import type { Resource, ResourceStore } from '../store/resources.ts';
import type { Params } from './params.ts';
import { USER_SCOPES } from './scopes.ts';

/** The `resource` parameter, at most once: an absolute URI without a fragment (RFC 8707 §2). */
export function resourceParam(params: Params): string | undefined {
  const values = params.get('resource') ?? [];
  if (values.length > 1) throw new InvalidTarget('Tessera issues tokens for one resource per request');
  const uri = values[0];
  if (uri === undefined || uri === '') return undefined;
  const problem = resourceUriProblem(uri);
  if (problem) throw new InvalidTarget(`resource ${problem}`);
  return uri;
}

/** What is wrong with a resource URI, or undefined (RFC 8707 §2: absolute, no fragment; http or https). */
export function resourceUriProblem(uri: string): string | undefined {
  const url = URL.parse(uri);
  if (!url || !['https:', 'http:'].includes(url.protocol)) return 'must be an absolute http or https URI';
  if (uri.includes('#')) return 'must not contain a fragment';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  return undefined;
}

export async function knownResource(store: ResourceStore, uri: string): Promise<Resource> {
  const resource = await store.getResource(uri);
  if (!resource) throw new InvalidTarget('the resource is not one this server issues tokens for');
  return resource;
}

/**
 * At the authorization endpoint: every scope asked for is one the resource accepts or is about the
 * user (openid, profile, email), and at least one is the resource's.
 */
export function checkScopesForResource(scopes: readonly string[], resource: Resource): void {
  const foreign = scopes.filter((s) => !USER_SCOPES.includes(s) && !resource.scopes.includes(s));
  if (foreign.length > 0) {
    throw new InvalidScope('scope names a scope the resource does not accept', `foreign: ${foreign.join(' ')}`);
  }
  if (!scopes.some((s) => resource.scopes.includes(s)))
    throw new InvalidScope('ask for at least one scope the resource accepts');
}

/** Whom an access token is for, and its scopes. */
export interface Target {
  audience: string;
  scopes: string[];
}

/**
 * The access token's audience and scopes at the token endpoint: the resource asked for (which must
 * be the grant's, when the grant has one), or else the grant's, or else the default audience.
 */
export async function tokenTarget(
  store: ResourceStore,
  defaultAudience: string,
  grant: { resource: string | null; scopes: string[] },
  requested: string | undefined,
): Promise<Target> {
  if (requested !== undefined && grant.resource !== null && requested !== grant.resource) {
    throw new InvalidTarget('the grant was authorized for another resource');
  }
  const uri = requested ?? grant.resource;
  if (uri === null) return { audience: defaultAudience, scopes: grant.scopes };
  const resource = await knownResource(store, uri);
  const scopes = grant.scopes.filter((s) => resource.scopes.includes(s));
  if (scopes.length === 0) throw new InvalidTarget('the resource accepts none of the scopes granted');
  return { audience: resource.uri, scopes };
}
