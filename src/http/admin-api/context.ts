// What the admin API's route modules share (./index.ts builds it): the server's parts, and the
// requester of an authorized request.
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../config/index.ts';
import type { Requester } from '../../events/index.ts';
import type { Store } from '../../store/store.ts';
import type { KeyStore } from '../../tokens/keystore.ts';
import type { Secrets } from '../../tokens/secrets.ts';

export const ADMIN_API_PREFIX = '/admin/api/v1';

export interface AdminApiDeps {
  config: Config;
  store: Store;
  keys: KeyStore;
  secret: Secrets;
  /** Epoch seconds. */
  now: () => number;
}

/** What the route modules share. */
export interface AdminApi extends AdminApiDeps {
  /** The requester of an authorized request: who acted, from where (./auth.ts). */
  requester(request: FastifyRequest): Requester;
  /** The clock and the requester, as the operations of src/admin take them. */
  options(request: FastifyRequest): { now: number; requester: Requester };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the admin API's auth hook. */
    adminRequester: Requester | null;
  }
}
