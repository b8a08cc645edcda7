// `tessera resources …`: the APIs access tokens may be asked for (RFC 8707), with the scopes each accepts.
import { CLI, securityEvent } from '../../events/index.ts';
import type { Config } from '../../config/index.ts';
import { resourceUriProblem } from '../../oauth/resources.ts';
import type { Resource, ResourceStore } from '../../store/store.ts';
import { splitScope } from '../../store/rows.ts';
import { UsageError } from '../operations.ts';
import { formatTime, type Io, NotFound, parse, requireOption, requirePositional } from './common.ts';

function describe(resource: Resource): Record<string, unknown> {
  return {
    uri: resource.uri,
    name: resource.name,
    scope: resource.scopes.join(' '),
    created_at: formatTime(resource.createdAt),
  };
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
      const scopes = [...new Set(splitScope(requireOption(values.scope, '--scope')))];
      if (scopes.length === 0) throw new UsageError('--scope must name at least one scope');
      // Tokens for an API carry its own scopes; openid, profile and email are about the user.
      const unknown = scopes.filter((s) => !config.scopes.has(s) || ['openid', 'profile', 'email'].includes(s));
      if (unknown.length > 0) {
        const api = [...config.scopes.keys()].filter((s) => !['openid', 'profile', 'email'].includes(s));
        throw new UsageError(`--scope: ${unknown.join(' ')} is not an API scope (API scopes: ${api.join(' ')})`);
      }
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
      const resources = await store.listResources();
      if (values.json) io.out(JSON.stringify(resources.map(describe), null, 2));
      else if (resources.length === 0) io.out('no resources');
      else for (const r of resources) io.out(`${r.uri}  ${r.name}  ${r.scopes.join(' ')}`);
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
        sub ? `unknown resources command "${sub}"` : 'resources needs a command: create, list, delete',
      );
  }
}
