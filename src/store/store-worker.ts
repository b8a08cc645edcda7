// The worker thread behind ./worker-store.ts: owns the SQLite connection and answers Store calls.
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from './index.ts';
import type { Reply, Request } from './worker-store.ts';

const store = await openStore((workerData as { databaseUrl: string }).databaseUrl, { thread: 'current' });
const port = parentPort!;

port.on('message', (request: Request) => {
  const method = store[request.method] as (...args: unknown[]) => unknown;
  Promise.resolve()
    .then(() => method.apply(store, request.args))
    .then(
      (value) => port.postMessage({ id: request.id, value } satisfies Reply),
      (error: unknown) => {
        const err = error instanceof Error ? error : new Error(String(error));
        port.postMessage({ id: request.id, error: { name: err.name, message: err.message, code: (err as { code?: unknown }).code } } satisfies Reply);
      },
    );
});
