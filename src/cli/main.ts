// The tessera command: tessera <clients|users|resources|providers|connections|webhooks|grants|keys|events|secret|
// backup|restore-finish|export|import|check|migrate|serve>, and --version. Reads the same environment variables as the
// server (DATABASE_URL, TESSERA_SECRET, …).
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { type Config, ConfigError, loadConfig } from '../config/index.ts';
import type { Store } from '../store/store.ts';
import { UsageError } from './operations.ts';
import { AdminError, NotFoundError } from '../admin/errors.ts';
import { backupCommand, restoreFinishCommand } from './commands/backup.ts';
import { checkCommand } from './commands/check.ts';
import { clientsCommand } from './commands/clients.ts';
import { eventsCommand } from './commands/events.ts';
import { grantsCommand } from './commands/grants.ts';
import { keysCommand } from './commands/keys.ts';
import { providersCommand } from './commands/providers.ts';
import { connectionsCommand } from './commands/connections.ts';
import { resourcesCommand } from './commands/resources.ts';
import { secretCommand } from './commands/secret.ts';
import { exportCommand, importCommand } from './commands/transfer.ts';
import { usersCommand } from './commands/users.ts';
import { mailCommand } from './commands/mail.ts';
import { webhooksCommand } from './commands/webhooks.ts';
import { withStore, type Io } from './commands/common.ts';
import { migrateCommand, migrationLogger } from './commands/migrate.ts';
import { VERSION } from '../release.ts';

export const USAGE = `Usage: tessera <command> [options]

  clients create --name NAME --redirect-uri URI [--redirect-uri URI …] --scope "openid profile …"
                 [--post-logout-redirect-uri URI …] [--public] [--first-party] [--require-mfa] [--require-dpop]
                 [--auth-method client_secret_basic|client_secret_post] [--alg RS256|ES256]
                 [--grant-types authorization_code,refresh_token,client_credentials,
                  urn:ietf:params:oauth:grant-type:device_code,
                  urn:ietf:params:oauth:grant-type:token-exchange,urn:ietf:params:oauth:grant-type:jwt-bearer]
                 [--allowed-origin ORIGIN …] [--access-token-ttl S] [--refresh-token-ttl S]
                 [--id-token-ttl S] [--exchange-audience URI …] [--json]
  clients update ID [--name N] [--redirect-uri URI …] [--post-logout-redirect-uri URI …]
                 [--no-post-logout-redirect-uris] [--scope "…"] [--grant-types …]
                 [--allowed-origin ORIGIN …] [--no-allowed-origins] [--require-mfa|--no-require-mfa]
                 [--require-dpop|--no-require-dpop]
                 [--access-token-ttl S|default] [--refresh-token-ttl S|default] [--id-token-ttl S|default]
                 [--exchange-audience URI …] [--no-exchange-audiences] [--json]   (the client_id stays)
  clients list [--json] | show ID [--json] | delete ID | rotate-secret ID [--grace SECONDS] [--json]
  users create --username U --email E [--name N] [--given-name G] [--family-name F] [--password-stdin]
                 [--email-verified]
  users update USERNAME [--username U] [--email E] [--email-verified] [--name N] [--given-name G]
                 [--family-name F] [--json]   (a new email is unverified unless --email-verified)
  users invite --email ADDRESS [--username NAME] [--name N]      (a mail with a link to choose a password)
  users invite --email ADDRESS [--username NAME] --resend        (a new link; the earlier ones stop working)
  users list [--search TEXT] [--limit N] [--cursor C] [--json]   (--limit prints the next page's cursor)
  users show USERNAME [--json] | sessions USERNAME [--json] | sign-out USERNAME [--grants | --session ID]
        | set-password USERNAME --password-stdin | disable USERNAME | enable USERNAME | delete USERNAME
        | unlock USERNAME | unlink USERNAME PROVIDER | mfa show USERNAME [--json] | mfa reset USERNAME
  mail list [--limit N] [--json]   recent mails and their states (never their links)
  resources create --uri URI --scope "SCOPES" [--name NAME] [--json]
  resources list [--json] | show URI [--json] | update URI [--scope "SCOPES"] [--name NAME] [--json]
        | delete URI
  providers create --type oidc --issuer URL --client-id ID --client-secret-stdin [--id ID] [--name NAME]
                 [--scope "openid profile email"] [--trust-email] [--link-only] [--trust-upstream-mfa]
                 [--allow-private-network] [--login-hint-domain DOMAIN …] [--accept-id-jag] [--no-check] [--json]
  providers create --type github --client-id ID --client-secret-stdin [--id ID] [--name NAME]
                 [--github-url URL] [--github-api-url URL] [--trust-email] [--link-only] [--json]
                 (both print the redirect URI to register at the provider)
  providers list [--json] | show ID [--json] | delete ID
  providers update ID [any create option but --type and --id] [--no-trust-email] [--no-link-only]
                 [--no-trust-upstream-mfa] [--no-allow-private-network] [--no-login-hint-domains]
                 [--no-accept-id-jag] [--keep-links]
  connections create --client CLIENT_ID --audience ISSUER --remote-client-id ID --scope "SCOPES"
                 [--resource URI] [--json]     (the client may ask for ID-JAGs for that issuer)
  connections list [--client CLIENT_ID] [--json] | show ID [--json] | delete ID
  connections update ID [--remote-client-id ID] [--scope "SCOPES"] [--resource URI|--no-resource] [--json]
  webhooks create --url URL --events TYPE[,TYPE…]|all [--json] (prints the secret, once)
  webhooks list [--json] | show ID [--json] | update ID [--url URL] [--events TYPE[,TYPE…]|all] [--json]
        | delete ID | rotate-secret ID [--grace SECONDS] [--json]
  webhooks test ID | deliveries ID [--limit N] [--json] | redeliver DELIVERY_ID
  grants list --user USERNAME [--json]
  grants revoke GRANT_ID | revoke --user USERNAME --client CLIENT_ID
        | revoke --client CLIENT_ID   (every user's grants of the client, and their consents)
  keys list [--json] | rotate [--alg RS256|ES256] [--now]
  events list [--user USERNAME] [--client CLIENT_ID] [--type TYPE] [--request REQUEST_ID]
              [--since DATE|24h|7d] [--limit N] [--json]
  secret reencrypt [--dry-run]     move stored values from TESSERA_SECRET_PREVIOUS to TESSERA_SECRET
  backup --output FILE             a consistent, owner-only copy, fenced when restored (never migrates)
  restore-finish                   after a restore made by other means: end every session and refresh
                                   token, replace the signing keys
  export [--output FILE] [--include-keys] [--include-events]     JSON lines, to standard output
  import [--input FILE]            into an empty database, from standard input; all or nothing
  check [--json]   the settings, the database and its migrations, the SMTP server, the signing keys: one
                   verdict each; exit 0 when none failed, 1 otherwise; changes nothing
  migrate [--status [--json]]      apply pending database migrations (a JSON log line each); with
                                   --status, list applied, pending and newer ones, changing nothing
  serve          start the server (same as npm start)
  --version, -v  print the release (tessera 0.2.0)

Configuration comes from the environment: DATABASE_URL, TESSERA_SECRET, TESSERA_DATA_DIR, …`;

const COMMANDS = {
  clients: clientsCommand,
  users: usersCommand,
  mail: mailCommand,
  grants: grantsCommand,
  resources: resourcesCommand,
  webhooks: webhooksCommand,
  keys: keysCommand,
  providers: providersCommand,
  connections: connectionsCommand,
  events: (store: Store, config: Config, args: string[], io: Io) => eventsCommand(store, config, args, io),
  secret: secretCommand,
  'restore-finish': restoreFinishCommand,
  // Each reads or writes through a connection of its own, on the migrated database.
  export: (_store: Store, config: Config, args: string[], io: Io) => exportCommand(config, args, io),
  import: (_store: Store, config: Config, args: string[], io: Io) => importCommand(config, args, io),
};

/**
 * Control characters (but the line breaks and tabs of our own output) and the bidirectional overrides
 * that can rewrite a terminal or reorder a line, written as escapes: client ids, names, URLs and user
 * agents come from anyone, and `events list` or `clients show` must not hand a terminal their codes.
 */
// eslint-disable-next-line no-control-regex
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function escapeControls(line: string): string {
  return line.replace(TERMINAL_CONTROLS, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
  });
}

/** Runs one command; returns the exit code (0 ok, 1 failure, 2 wrong arguments). */
export async function run(argv: string[], unsafeIo: Io): Promise<number> {
  const io: Io = {
    ...unsafeIo,
    out: (line) => unsafeIo.out(escapeControls(line)),
    err: (line) => unsafeIo.err(escapeControls(line)),
  };
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    io.out(USAGE);
    return command ? 0 : 2;
  }
  if (command === '--version' || command === '-v') {
    io.out(`tessera ${VERSION}`);
    return 0;
  }
  try {
    if (command === 'serve' && rest.length > 0) throw new UsageError(`${command} takes no arguments`);
    // It reads the settings itself (a wrong one is its first verdict) and opens the database without migrating it.
    if (command === 'check') return await checkCommand(rest, io);
    if (command === 'serve') {
      // The server reads its configuration itself, and logs why it cannot start as JSON, as npm start does.
      const { start } = await import('../main.ts');
      await start(io.env);
      return 0;
    }
    const config = loadConfig(io.env);
    // A backup is of the schema as it is: taken before an upgrade, it must not apply the upgrade's migrations.
    if (command === 'backup') return await backupCommand(config, rest, io);
    if (command === 'migrate') return await migrateCommand(config, rest, io);
    const handler = COMMANDS[command as keyof typeof COMMANDS];
    if (!handler) throw new UsageError(`unknown command "${command}"`);
    // A command on a database not yet migrated migrates it first: each migration a log line, on
    // standard error so that the command's own output (--json) stays as it is.
    return await withStore(config, (store) => handler(store, config, rest, io), migrationLogger(io.err));
  } catch (err) {
    if (err instanceof NotFoundError) {
      io.err(`tessera: ${err.message}`);
      return 1;
    }
    const code = String((err as { code?: unknown }).code);
    if (
      err instanceof UsageError ||
      err instanceof AdminError ||
      err instanceof ConfigError ||
      code.startsWith('ERR_PARSE_ARGS')
    ) {
      io.err(`tessera: ${(err as Error).message}`);
      io.err('Run "tessera --help" for usage.');
      return 2;
    }
    io.err(`tessera: ${(err as Error).message}`);
    return 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const io: Io = {
    env: process.env,
    out: (line) => console.log(line),
    err: (line) => console.error(line),
    stdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    stdinLines: () => createInterface({ input: process.stdin, crlfDelay: Infinity }),
  };
  const args = process.argv.slice(2);
  run(args, io).then((code) => {
    // `serve` keeps running; everything else exits with its code.
    if (args[0] !== 'serve') process.exitCode = code;
  });
}
