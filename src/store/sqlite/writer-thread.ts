// The writer (./writer.ts) on a worker thread that owns the writing connection, so that node:sqlite's
// synchronous commits (and their fsyncs) never stall the HTTP work of all requests. A call's promise
// resolves after its commit, so a read that follows it on the event loop's connection sees it. This
// file is also the worker's entry point.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { DatabaseUnavailable } from '../faults.ts';
import { openSqlite } from './connection.ts';
import { SqliteWriter } from './writer.ts';

/** The writer's methods, as the event loop calls them: here or on the worker thread. */
export type Writer = Pick<SqliteWriter, 'execute' | 'migrate' | 'close' | 'stats'>;
type Method = Exclude<keyof Writer, 'stats'>;

type Request = { id: number; method: Method; args: unknown[] };
/** An error crosses as its fields; `fault` marks a DatabaseUnavailable, sent as the error behind it. */
type ErrorFields = { name: string; message: string; code?: unknown; errcode?: unknown; fault?: boolean };
type Reply = { id: number; value?: unknown; error?: ErrorFields };

export class WriterThread implements Writer {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve: (value: never) => void; reject: (error: Error) => void }>();
  #nextId = 0;
  #stopped: Error | undefined;
  #faults = 0;

  constructor(file: string) {
    this.#worker = new Worker(new URL(import.meta.url), { workerData: { tesseraSqliteWriter: file } });
    // An idle worker must not keep the process alive; one with calls in flight does.
    this.#worker.unref();
    this.#worker.on('message', (reply: Reply) => {
      const pending = this.#pending.get(reply.id);
      if (!pending) return;
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) this.#worker.unref();
      if (!reply.error) return pending.resolve(reply.value as never);
      const { fault, ...fields } = reply.error;
      const error = Object.assign(new Error(fields.message), fields);
      if (fault) this.#faults++;
      pending.reject(fault ? new DatabaseUnavailable(error) : error);
    });
    const fail = (error: Error) => {
      this.#stopped ??= error;
      for (const pending of this.#pending.values()) pending.reject(this.#stopped);
      this.#pending.clear();
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', (code) => fail(new Error(`the SQLite writer thread stopped (exit code ${code})`)));
  }

  #call<T>(method: Method, args: unknown[]): Promise<T> {
    if (this.#stopped) return Promise.reject(this.#stopped);
    const id = ++this.#nextId;
    return new Promise<T>((resolve, reject) => {
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ id, method, args } satisfies Request);
    });
  }

  stats(): { queued: number; faults: number } {
    return { queued: this.#pending.size, faults: this.#faults };
  }
  execute(...args: Parameters<Writer['execute']>) {
    return this.#call<Awaited<ReturnType<Writer['execute']>>>('execute', args);
  }
  migrate(...args: Parameters<Writer['migrate']>) {
    return this.#call<string[]>('migrate', args);
  }
  async close(): Promise<void> {
    if (!this.#stopped) await this.#call('close', []);
    await this.#worker.terminate();
  }
}

const file = isMainThread ? undefined : (workerData as { tesseraSqliteWriter?: string } | null)?.tesseraSqliteWriter;
if (file !== undefined) {
  const writer = new SqliteWriter(openSqlite(file), () => openSqlite(file));
  const port = parentPort!;
  port.on('message', ({ id, method, args }: Request) => {
    Promise.resolve()
      .then(() => (writer[method] as (...a: unknown[]) => Promise<unknown>).apply(writer, args))
      .then(
        (value) => port.postMessage({ id, value } satisfies Reply),
        (error: unknown) => {
          const fault = error instanceof DatabaseUnavailable;
          const err = fault ? error.fault : error instanceof Error ? error : new Error(String(error));
          const { code, errcode } = err as { code?: unknown; errcode?: unknown };
          port.postMessage({
            id,
            error: { name: err.name, message: err.message, code, errcode, fault },
          } satisfies Reply);
        },
      );
  });
}
