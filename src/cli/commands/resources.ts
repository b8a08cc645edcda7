// `tessera resources …`: the APIs access tokens may be asked for (RFC 8707), with the scopes each accepts.
import { CLI, securityEvent } from '../../events/index.ts';
import type { Config } from '../../config/index.ts';
import { resourceUriProblem } from '../../oauth/resources.ts';
import { USER_SCOPES } from '../../oauth/scopes.ts';
import { splitScope } from '../../store/columns.ts';
import type { Resource, ResourceStore } from '../../store/resources.ts';
import { UsageError } from '../operations.ts';
import { formatTime, type Io, NotFound, parse, printList, printRecord, requireOption } from './common.ts';
import { requirePositional } from './common.ts';

function describe(resource: Resource): Record<string, unknown> {
  return {
    uri: resource.uri,
    name: resource.name,
    scope: resource.scopes.join(' '),
    created_at: formatTime(resource.createdAt),
  };
}

/** The scopes of `--scope`, each an API scope Tessera knows (openid, profile and email are about the user). */
function apiScopes(config: Config, value: string): string[] {
  const scopes = [...new Set(splitScope(value))];
  if (scopes.length === 0) throw new UsageError('--scope must name at least one scope');
  const unknown = scopes.filter((s) => !config.scopes.has(s) || USER_SCOPES.includes(s));
  if (unknown.length > 0) {
    const api = [...config.scopes.keys()].filter((s) => !USER_SCOPES.includes(s));
    throw new UsageError(`--scope: ${unknown.join(' ')} is not an API scope (API scopes: ${api.join(' ')})`);
  }
  return scopes;
}

export async function resourcesCommand(store: ResourceStore, config: Config, args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  const now = Math.floor(Date.now() / 1000);
  switch (sub) {
    case 'create': {
      const { values } = parse(rest, {
        uri: { type: 'string' },
        scope: { type: 'string' },
        name: { type: 'string' },
        json: { type: 'boolean' },
      });
      const uri = requireOption(values.uri, '--uri');
      const problem = resourceUriProblem(uri);
      if (problem) throw new UsageError(`--uri: "${uri}" ${problem}`);
      const scopes = apiScopes(config, requireOption(values.scope, '--scope'));
      if (await store.getResource(uri)) throw new UsageError(`a resource ${uri} exists already`);
      const resource: Resource = { uri, name: values.name?.trim() || new URL(uri).host, scopes, createdAt: now };
      const created = securityEvent('resource.created', now, { requester: CLI, data: { uri, scopes } });
      await store.createResource(resource, created);
      if (values.json) io.out(JSON.stringify(describe(resource), null, 2));
      else io.out(`created resource ${uri} (${resource.name}) accepting ${scopes.join(' ')}`);
      return 0;
    }
    case 'list': {
      const { values } = parse(rest, { json: { type: 'boolean' } });
      printList(io, values.json, await store.listResources(), describe, 'no resources', (r) => {
        return `${r.uri}  ${r.name}  ${r.scopes.join(' ')}`;
      });
      return 0;
    }
    case 'show': {
      const { values, positionals } = parse(rest, { json: { type: 'boolean' } }, 1);
      const uri = requirePositional(positionals, 'the resource URI');
      const resource = await store.getResource(uri);
      if (!resource) throw new NotFound(`no resource ${uri}`);
      printRecord(io, values.json, describe(resource), 11);
      return 0;
    }
    case 'update': {
      const { values, positionals } = parse(
        rest,
        { scope: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } },
        1,
      );
      const uri = requirePositional(positionals, 'the resource URI');
      const resource = await store.getResource(uri);
      if (!resource) throw new NotFound(`no resource ${uri}`);
      const name = values.name === undefined ? resource.name : values.name.trim();
      if (name === '') throw new UsageError('--name must not be empty');
      const scopes = values.scope === undefined ? resource.scopes : apiScopes(config, values.scope);
      const updated = { ...resource, name, scopes };
      const event = securityEvent('resource.updated', now, { requester: CLI, data: { uri, scopes } });
      await store.updateResource(updated, event);
      if (values.json) io.out(JSON.stringify(describe(updated), null, 2));
      else io.out(`updated resource ${uri} (${name}) accepting ${scopes.join(' ')}`);
      return 0;
    }
    case 'delete': {
      const { positionals } = parse(rest, {}, 1);
      const uri = requirePositional(positionals, 'the resource URI');
      const deleted = securityEvent('resource.deleted', now, { requester: CLI, data: { uri } });
      if (!(await store.deleteResource(uri, deleted))) throw new NotFound(`no resource ${uri}`);
      io.out(`deleted resource ${uri}`);
      return 0;
    }
    default:
      throw new UsageError(
        sub ? `unknown resources command "${sub}"` : 'resources needs a command: create, list, show, update, delete',
      );
  }
}
