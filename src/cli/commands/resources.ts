// `tessera resources …`: the APIs access tokens may be asked for (RFC 8707), with the scopes each accepts.
import type { Config } from '../../config/index.ts';
import type { ResourceStore } from '../../store/resources.ts';
import {
  createResource,
  deleteResource,
  describeResource as describe,
  findResource,
  updateResource,
} from '../../admin/resources.ts';
import { UsageError } from '../operations.ts';
import {
  deleteOne,
  type Io,
  JSON_OPTION,
  listAll,
  parse,
  requireOption,
  requirePositional,
  showOne,
  strings,
} from './common.ts';

export async function resourcesCommand(store: ResourceStore, config: Config, args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  const now = Math.floor(Date.now() / 1000);
  switch (sub) {
    case 'create': {
      const { values } = parse(rest, { ...strings('uri', 'scope', 'name'), ...JSON_OPTION });
      const uri = requireOption(values.uri, '--uri');
      const input = { uri, scope: requireOption(values.scope, '--scope'), name: values.name };
      const resource = await createResource(store, config, input, { now });
      if (values.json) io.out(JSON.stringify(describe(resource), null, 2));
      else io.out(`created resource ${uri} (${resource.name}) accepting ${resource.scopes.join(' ')}`);
      return 0;
    }
    case 'list':
      return listAll(
        io,
        rest,
        () => store.listResources(),
        describe,
        'no resources',
        (r) => {
          return `${r.uri}  ${r.name}  ${r.scopes.join(' ')}`;
        },
      );
    case 'show':
      return showOne(io, rest, 'the resource URI', async (uri) => describe(await findResource(store, uri)), 11);
    case 'update': {
      const { values, positionals } = parse(rest, { ...strings('scope', 'name'), ...JSON_OPTION }, 1);
      const uri = requirePositional(positionals, 'the resource URI');
      const updated = await updateResource(store, config, uri, { scope: values.scope, name: values.name }, { now });
      if (values.json) io.out(JSON.stringify(describe(updated), null, 2));
      else io.out(`updated resource ${uri} (${updated.name}) accepting ${updated.scopes.join(' ')}`);
      return 0;
    }
    case 'delete':
      return deleteOne(io, rest, 'the resource URI', 'resource', (uri) => deleteResource(store, uri, { now }));
    default:
      throw new UsageError(
        sub ? `unknown resources command "${sub}"` : 'resources needs a command: create, list, show, update, delete',
      );
  }
}
