// A certificate authority that lives for one test run, and a server certificate it signed for
// localhost, 127.0.0.1 and ::1: Tessera trusts it the way it will in production tests, through
// NODE_EXTRA_CA_CERTS, never by turning certificate checks off. Made with the openssl CLI; P-256 keys
// keep it to a few milliseconds.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface ThrowawayCa {
  /** The CA certificate's file, for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  /** The server's private key and certificate, PEM, for https.createServer. */
  key: string;
  cert: string;
}

// Our own extension sections, so that the machine's openssl.cnf does not decide what a CA is.
const CONFIG = `
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1, IP:::1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
`;

const run = promisify(execFile);

/** Writes the CA and the server's key and certificate into dir (which the caller removes). */
export async function createThrowawayCa(dir: string): Promise<ThrowawayCa> {
  const file = (name: string) => join(dir, name);
  await writeFile(file('openssl.cnf'), CONFIG);
  // A new P-256 key and its certificate, self-signed or signed by the CA given in `more`.
  const certificate = (section: string, subject: string, name: string, more: string[] = []) =>
    run('openssl', [
      ...['req', '-x509', '-config', file('openssl.cnf'), '-extensions', section, '-subj', subject, '-days', '1'],
      ...['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-noenc'],
      ...['-keyout', file(`${name}-key.pem`), '-out', file(`${name}.pem`), ...more],
    ]);
  await certificate('ca', '/CN=Tessera throwaway CA', 'ca');
  await certificate('server', '/CN=localhost', 'server', ['-CA', file('ca.pem'), '-CAkey', file('ca-key.pem')]);
  return {
    caFile: file('ca.pem'),
    key: await readFile(file('server-key.pem'), 'utf8'),
    cert: await readFile(file('server.pem'), 'utf8'),
  };
}
