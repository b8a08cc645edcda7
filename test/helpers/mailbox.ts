// The mails a test server queued, delivered into memory when the test asks (no SMTP server): for tests
// that follow a mail's link over HTTP or count what was sent. ./smtp.ts is a real SMTP server, for
// the tests of delivery itself.
import { MailDelivery } from '../../src/mail/delivery.ts';
import type { Envelope } from '../../src/mail/transport.ts';
import type { TestServer } from './server.ts';

export class Mailbox {
  readonly sent: Envelope[] = [];
  readonly #delivery: MailDelivery;
  readonly #issuer: string;

  constructor(server: TestServer) {
    const silent = { info() {}, warn() {}, error() {} };
    const transport = { send: async (mail: Envelope) => void this.sent.push(mail), verify: async () => {}, close() {} };
    this.#issuer = server.issuer;
    this.#delivery = new MailDelivery(server.store, {
      secret: server.secret,
      transport,
      from: server.config.mail.from,
      interval: 60,
      now: () => (server.clock.frozen ?? Math.floor(Date.now() / 1000)) + server.clock.offset,
      log: silent,
    });
  }

  /** Delivers every mail due; then the mails sent to `to` so far. */
  async to(to: string): Promise<Envelope[]> {
    while ((await this.#delivery.runOnce()) > 0);
    return this.sent.filter((m) => m.to.toLowerCase() === to.toLowerCase());
  }

  /** The link (a path and query on the issuer) of the latest mail to `to`. */
  async link(to: string): Promise<string> {
    const mail = (await this.to(to)).at(-1);
    const found = mail && new RegExp(`${this.#issuer.replace(/[.]/g, '\\.')}(/[^\\s"<>]+)`).exec(mail.text);
    if (!found) throw new Error(`no mail with a link to ${to}`);
    return found[1]!;
  }

  async close(): Promise<void> {
    await this.#delivery.stop();
  }
}
