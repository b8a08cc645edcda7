// The pages' stylesheet and the operator's brand files (src/ui/brand.ts), from our own origin: those
// named by their content's hash kept a year, the stylesheet's plain address an hour.
import type { FastifyInstance } from 'fastify';
import type { Asset } from '../../ui/brand.ts';

/** The pages' scripts of our own (src/ui/assets/), each at its path: `[path, its text]`. */
export function scriptRoutes(app: FastifyInstance, scripts: ReadonlyArray<readonly [string, string]>): void {
  for (const [path, body] of scripts) {
    app.get(path, async (_, reply) =>
      reply
        .header('content-type', 'text/javascript; charset=utf-8')
        .header('cache-control', 'public, max-age=3600')
        .header('x-content-type-options', 'nosniff')
        .send(body),
    );
  }
}

export function assetRoutes(app: FastifyInstance, assets: readonly Asset[]): void {
  for (const asset of assets) {
    const cache = asset.immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=3600';
    app.get(asset.path, async (_, reply) => {
      for (const [name, value] of Object.entries(asset.headers ?? {})) reply.header(name, value);
      return reply
        .header('content-type', asset.type)
        .header('cache-control', cache)
        .header('x-content-type-options', 'nosniff')
        .send(asset.body);
    });
  }
}
