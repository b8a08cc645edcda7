// The operator's operations on APIs (RFC 8707 resources): `tessera resources …` and the admin API
// call them alike. A bad value is an AdminError naming the CLI's option (the API's field is its name).
import type { Config } from '../config/index.ts';
import { CLI, type Requester, securityEvent } from '../events/index.ts';
import { resourceUriProblem } from '../oauth/resources.ts';
import { USER_SCOPES } from '../oauth/scopes.ts';
import { splitScope } from '../store/columns.ts';
import type { Resource, ResourceStore } from '../store/resources.ts';
import { AdminError, ConflictError, found, NotFoundError } from './errors.ts';

interface Options {
  now: number;
  requester?: Requester | undefined;
}

/** A resource as `--json` and the API show it. */
export function describeResource(resource: Resource) {
  return {
    uri: resource.uri,
    name: resource.name,
    scope: resource.scopes.join(' '),
    created_at: new Date(resource.createdAt * 1000).toISOString(),
  };
}

/** The scopes of `--scope`, each an API scope Tessera knows (openid, profile and email are about the user). */
function apiScopes(config: Pick<Config, 'scopes'>, value: string): string[] {
  const scopes = [...new Set(splitScope(value))];
  if (scopes.length === 0) throw new AdminError('--scope must name at least one scope');
  const unknown = scopes.filter((s) => !config.scopes.has(s) || USER_SCOPES.includes(s));
  if (unknown.length > 0) {
    const api = [...config.scopes.keys()].filter((s) => !USER_SCOPES.includes(s));
    throw new AdminError(`--scope: ${unknown.join(' ')} is not an API scope (API scopes: ${api.join(' ')})`);
  }
  return scopes;
}

export async function findResource(store: Pick<ResourceStore, 'getResource'>, uri: string): Promise<Resource> {
  return found(await store.getResource(uri), `no resource ${uri}`);
}

/** Registers an API: its URI, the API scopes it accepts, a name (its host by default). */
export async function createResource(
  store: ResourceStore,
  config: Pick<Config, 'scopes'>,
  input: { uri: string; scope: string; name?: string | undefined },
  options: Options,
): Promise<Resource> {
  const { uri } = input;
  const problem = resourceUriProblem(uri);
  if (problem) throw new AdminError(`--uri: "${uri}" ${problem}`);
  const scopes = apiScopes(config, input.scope);
  if (await store.getResource(uri)) throw new ConflictError(`a resource ${uri} exists already`);
  const { now, requester = CLI } = options;
  const resource: Resource = { uri, name: input.name?.trim() || new URL(uri).host, scopes, createdAt: now };
  await store.createResource(resource, securityEvent('resource.created', now, { requester, data: { uri, scopes } }));
  return resource;
}

/** Changes an API's name or scopes. */
export async function updateResource(
  store: ResourceStore,
  config: Pick<Config, 'scopes'>,
  uri: string,
  input: { scope?: string | undefined; name?: string | undefined },
  options: Options,
): Promise<Resource> {
  const resource = await findResource(store, uri);
  const name = input.name === undefined ? resource.name : input.name.trim();
  if (name === '') throw new AdminError('--name must not be empty');
  const scopes = input.scope === undefined ? resource.scopes : apiScopes(config, input.scope);
  const updated = { ...resource, name, scopes };
  const { now, requester = CLI } = options;
  const event = securityEvent('resource.updated', now, { requester, data: { uri, scopes } });
  if (!(await store.updateResource(updated, event))) throw new NotFoundError(`no resource ${uri}`);
  return updated;
}

/** Removes an API: tokens for it are no longer issued (those issued live on until they expire). */
export async function deleteResource(store: ResourceStore, uri: string, options: Options): Promise<void> {
  const { now, requester = CLI } = options;
  const deleted = securityEvent('resource.deleted', now, { requester, data: { uri } });
  if (!(await store.deleteResource(uri, deleted))) throw new NotFoundError(`no resource ${uri}`);
}
