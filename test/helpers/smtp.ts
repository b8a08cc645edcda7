// A real SMTP server for the tests (the `smtp-server` package) on 127.0.0.1 and a port of its own,
// with STARTTLS under a throwaway CA's certificate (./tls.ts) and a password, its mails parsed by
// `mailparser`. It can be stopped and started again on the same port: a mail server that is down.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { freePort } from './server.ts';
import { createThrowawayCa } from './tls.ts';

export interface ReceivedMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The first link of the plain-text part. */
  link: string | undefined;
  /** Whether it came over TLS (STARTTLS). */
  secure: boolean;
}

export interface TestSmtp {
  /** TESSERA_SMTP_URL, the password in TESSERA_SMTP_PASSWORD's place (a relay: no user, no parameter). */
  url: string;
  password: string;
  /** The CA's certificate (PEM) and its file, for NODE_EXTRA_CA_CERTS. */
  ca: string;
  caFile: string;
  received: ReceivedMail[];
  /** Resolves with the first mail (received already or to come) that `match` accepts. */
  waitFor(match: (mail: ReceivedMail) => boolean): Promise<ReceivedMail>;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * `relay`: a relay on this machine as Postfix is on many hosts: STARTTLS offered (under a certificate
 * nobody trusts, as Debian's snakeoil) but not required, and no credentials asked.
 */
export async function startSmtp(options: { relay?: boolean } = {}): Promise<TestSmtp> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-smtp-'));
  const ca = await createThrowawayCa(dir);
  const { readFile } = await import('node:fs/promises');
  const caPem = await readFile(ca.caFile, 'utf8');
  const port = await freePort();
  const password = 'smtp-password-for-tests';
  const received: ReceivedMail[] = [];
  const waiting: Array<{ match: (m: ReceivedMail) => boolean; resolve: (m: ReceivedMail) => void }> = [];
  let server: SMTPServer | undefined;

  const make = () =>
    new SMTPServer({
      key: ca.key,
      cert: ca.cert,
      authOptional: options.relay === true,
      // Credentials only over TLS (STARTTLS first), as a real submission server asks.
      allowInsecureAuth: false,
      onAuth(auth, _session, callback) {
        if (auth.username === 'tessera' && auth.password === password) callback(null, { user: 'tessera' });
        else callback(new Error('invalid credentials'));
      },
      onData(stream, session, callback) {
        simpleParser(stream)
          .then((parsed) => {
            const text = parsed.text ?? '';
            const mail: ReceivedMail = {
              from: parsed.from?.text ?? '',
              to: Array.isArray(parsed.to) ? parsed.to.map((a) => a.text).join(', ') : (parsed.to?.text ?? ''),
              subject: parsed.subject ?? '',
              text,
              html: typeof parsed.html === 'string' ? parsed.html : '',
              link: /https?:\/\/\S+/.exec(text)?.[0],
              secure: session.secure,
            };
            received.push(mail);
            for (const w of [...waiting]) {
              if (w.match(mail)) {
                waiting.splice(waiting.indexOf(w), 1);
                w.resolve(mail);
              }
            }
            callback();
          })
          .catch((err: Error) => callback(err));
      },
      logger: false,
    });

  const start = async () => {
    server = make();
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, '127.0.0.1', () => resolve());
    });
  };
  const stop = async () => {
    const s = server;
    server = undefined;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await start();
  return {
    url: options.relay ? `smtp://127.0.0.1:${port}` : `smtp://tessera@127.0.0.1:${port}`,
    password,
    ca: caPem,
    caFile: ca.caFile,
    received,
    waitFor(match) {
      const found = received.find(match);
      if (found) return Promise.resolve(found);
      // A mail that never comes fails the test in 20 s rather than hanging it.
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no such mail arrived within 20 s')), 20_000);
        waiting.push({ match, resolve: (mail) => (clearTimeout(timer), resolve(mail)) });
      });
    },
    stop,
    start,
    async close() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
