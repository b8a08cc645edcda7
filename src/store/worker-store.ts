// SQLite for the server: reads on the event loop, writes on a worker thread. node:sqlite is
// synchronous, so on the event loop every commit (and its fsync) would stall the HTTP work of all
// requests, and reads would queue behind the writes. Here a worker owns the writing connection and
// the group commit (./group-commit.ts), and the event loop keeps a second connection for reads: in
// WAL mode readers never wait for the writer, and a write's promise resolves after its commit, so a
// read that follows it sees it. bench/RESULTS.md has the figures.
import { Worker } from 'node:worker_threads';
import type { KyselyStore } from './kysely-store.ts';
import type { Store } from './store.ts';

// Optional methods (Store.rotateValidTokenFamily, PostgreSQL only) are left out: this store has none.
type Method = Exclude<{ [K in keyof Store]: Store[K] extends (...args: never[]) => Promise<unknown> ? K : never }[keyof Store], undefined>;
/** Where each Store method runs; the Record type makes every method choose. */
const PLACE: Record<Exclude<Method, 'close'>, 'read' | 'write'> = {
  createClient: 'write', getClient: 'read', listClients: 'read', deleteClient: 'write', setClientSecretHash: 'write',
  createUser: 'write', getUserById: 'read', getUserByUsername: 'read', listUsers: 'read', setUserPassword: 'write', setUserDisabled: 'write', countUsers: 'read',
  createSession: 'write', getSessionAndUser: 'read', deleteSession: 'write',
  getConsentedScopes: 'read', saveConsent: 'write',
  redeemAuthorizationCode: 'write',
  getGrant: 'read', revokeGrant: 'write', listActiveGrants: 'read', withdrawClient: 'write',
  revokeAccessToken: 'write', getAccessTokenState: 'read',
  getTokenFamily: 'read', rotateTokenFamily: 'write', getRefreshTokenFamily: 'read', rotateLegacyRefreshToken: 'write',
  purgeExpired: 'write', listSigningKeys: 'read', insertSigningKey: 'write', retireSigningKeys: 'write',
  migrate: 'write', ping: 'read',
};
/** Writes that change a client: the reader's cached copy is dropped first. */
const CLIENT_WRITES = new Set<string>(['createClient', 'deleteClient', 'setClientSecretHash']);

export type Request = { id: number; method: keyof Store; args: unknown[] };
export type Reply = { id: number; value?: unknown; error?: { name: string; message: string; code?: unknown } };

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

class WorkerStore {
  readonly dialect = 'sqlite' as const;
  readonly #reader: KyselyStore;
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #stopped: Error | undefined;

  constructor(databaseUrl: string, reader: KyselyStore) {
    this.#reader = reader;
    this.#worker = new Worker(new URL('./store-worker.ts', import.meta.url), { workerData: { databaseUrl } });
    // An idle worker must not keep the process alive; one with calls in flight does (see write).
    this.#worker.unref();
    this.#worker.on('message', (reply: Reply) => {
      const pending = this.#pending.get(reply.id);
      if (!pending) return;
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) this.#worker.unref();
      if (reply.error) pending.reject(Object.assign(new Error(reply.error.message), { name: reply.error.name, code: reply.error.code }));
      else pending.resolve(reply.value);
    });
    const fail = (error: Error) => {
      this.#stopped ??= error;
      for (const pending of this.#pending.values()) pending.reject(this.#stopped);
      this.#pending.clear();
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', (code) => fail(new Error(`the SQLite writer thread stopped (exit code ${code})`)));
  }

  read(method: keyof Store, args: unknown[]): Promise<unknown> {
    return (this.#reader[method] as (...a: unknown[]) => Promise<unknown>).apply(this.#reader, args);
  }

  write(method: keyof Store, args: unknown[]): Promise<unknown> {
    if (this.#stopped) return Promise.reject(this.#stopped);
    if (CLIENT_WRITES.has(method)) this.#reader.clearCaches();
    const id = ++this.#nextId;
    return new Promise((resolve, reject) => {
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ id, method, args } satisfies Request);
    });
  }

  clearCaches(): void {
    this.#reader.clearCaches();
  }

  async close(): Promise<void> {
    if (!this.#stopped) await this.write('close', []);
    await this.#worker.terminate();
    await this.#reader.close();
  }
}

export function openWorkerStore(databaseUrl: string, reader: KyselyStore): Store {
  const store = new WorkerStore(databaseUrl, reader);
  for (const [method, place] of Object.entries(PLACE) as Array<[Method, 'read' | 'write']>) {
    const value = place === 'read' ? (...args: unknown[]) => store.read(method, args) : (...args: unknown[]) => store.write(method, args);
    Object.defineProperty(store, method, { value });
  }
  return store as unknown as Store;
}
