// A webhook receiver on 127.0.0.1 for tests: what it got, how many requests it held open at once,
// and, while `hang`, every request held open until the test releases it (never a timer).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { freePort } from './server.ts';

export class Receiver {
  readonly received: string[] = [];
  readonly held: ServerResponse[] = [];
  open = 0;
  mostOpen = 0;
  server: Server | undefined;
  url = '';
  hang: boolean;
  constructor(hang: boolean) {
    this.hang = hang;
  }
  async start() {
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}/hook`;
    this.server = createServer((request: IncomingMessage, response: ServerResponse) => {
      this.open++;
      this.mostOpen = Math.max(this.mostOpen, this.open);
      response.on('close', () => this.open--);
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        this.received.push(body);
        if (this.hang) this.held.push(response);
        else response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
  }
  release() {
    for (const response of this.held.splice(0)) response.writeHead(204).end();
  }
  /** Answers at once from now on, what it held too. */
  answer() {
    this.hang = false;
    this.release();
  }
  async stop() {
    this.answer();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/** Resolves once `condition` holds, checking every 20 ms; rejects after `ms` with `what`. */
export async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
