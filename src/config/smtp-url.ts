// TESSERA_SMTP_URL read once, by the settings (src/config, which refuses what is wrong at start) and
// by the transport (../mail/transport.ts): where mail goes and how the connection is protected.
// - smtps://host[:465]: TLS from the start.
// - smtp://host[:587]: the connection must be upgraded with STARTTLS, or nothing is sent.
// - smtp://localhost:25?disable_starttls=true: plain SMTP, for a relay on this machine only (Postfix
//   or an MTA sidecar listening on loopback); the parameter is Ory Kratos's. Mail to any other host
//   always goes through TLS, so that no link leaves the machine in clear.

export interface SmtpEndpoint {
  host: string;
  port: number;
  /** How the connection is protected: TLS from the start, STARTTLS required, or none (loopback only). */
  tls: 'implicit' | 'starttls' | 'none';
  user: string;
  /** The password in the URL, if any. */
  password: string | null;
}

/** Why the URL cannot be used, said without its credentials. */
export class SmtpUrlError extends Error {
  override name = 'SmtpUrlError';
}

const PARAMETER = 'disable_starttls';

/** localhost, 127.0.0.0/8 or ::1: a relay on this machine. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return name === 'localhost' || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name);
}

export function parseSmtpUrl(value: string): SmtpEndpoint {
  const url = URL.parse(value);
  if (!url || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')) {
    throw new SmtpUrlError('an smtp:// or smtps:// URL');
  }
  const implicit = url.protocol === 'smtps:';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const unknown = [...url.searchParams.keys()].filter((name) => name !== PARAMETER);
  if (unknown.length > 0) {
    throw new SmtpUrlError(
      `unknown parameter ${unknown.map((n) => `"${n}"`).join(', ')}; the only one is ${PARAMETER}=true, ` +
        'for a relay on this machine (smtp://localhost:25?disable_starttls=true)',
    );
  }
  const disable = url.searchParams.getAll(PARAMETER);
  if (disable.length > 1 || (disable.length === 1 && disable[0] !== 'true' && disable[0] !== 'false')) {
    throw new SmtpUrlError(`${PARAMETER} is true or false, once`);
  }
  const plain = disable[0] === 'true';
  if (plain && implicit) {
    throw new SmtpUrlError(`${PARAMETER}=true goes with smtp://, not smtps:// (TLS from the start)`);
  }
  if (plain && !isLoopbackHost(host)) {
    throw new SmtpUrlError(
      `${PARAMETER}=true is for a relay on this machine only (localhost, 127.0.0.0/8, ::1), not ${host}: ` +
        'mail to another host goes through TLS (smtp:// with STARTTLS, or smtps://)',
    );
  }
  return {
    host,
    port: url.port ? Number(url.port) : implicit ? 465 : plain ? 25 : 587,
    tls: implicit ? 'implicit' : plain ? 'none' : 'starttls',
    user: decodeURIComponent(url.username),
    password: url.password !== '' ? decodeURIComponent(url.password) : null,
  };
}
