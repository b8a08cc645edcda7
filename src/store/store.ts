// What the domain code asks of the database: `Store`, every aggregate's narrow interface (each in the
// aggregate's file: ./clients.ts, ./users.ts, …) and what a running store does besides. SQLite
// (./sqlite/store.ts) and PostgreSQL (./postgres/store.ts) implement every method alike; they differ
// inside, never in what they answer. The contract tests in test/store run against both.
import type { NoMigrations } from 'kysely';
import type { MigrationStatus } from './migrations/index.ts';
import type { Client, ClientStore } from './clients.ts';
import type { ConnectionStore } from './connections.ts';
import type { EncryptedValueStore } from './encrypted.ts';
import type { EventStore } from './events.ts';
import type { GrantStore, RevocationStore } from './grants.ts';
import type { MailStore } from './mails.ts';
import type { LogoutDeliveryStore } from './logout-deliveries.ts';
import type { NoticeStore } from './notices.ts';
import type { OneTimeStore } from './one-time.ts';
import type { DeviceAuthorizationStore } from './device-authorizations.ts';
import type { PurgeInput } from './housekeeping.ts';
import type { PasskeyStore } from './passkeys.ts';
import type { ResourceStore } from './resources.ts';
import type { RestoreWatchStore } from './restore-watch.ts';
import type { RestoreStore } from './restores.ts';
import type { SecondFactorStore } from './second-factors.ts';
import type { SessionStore } from './sessions.ts';
import type { SigningKeyStore } from './signing-keys.ts';
import type { ThrottleStore } from './throttles.ts';
import type { UpstreamStore } from './upstream.ts';
import type { UserStore } from './users.ts';
import type { WebhookStore } from './webhooks.ts';

export interface DatabaseStats {
  /** Connections open (PostgreSQL's pool; SQLite's reader and writer). */
  open: number;
  /** Connections running a statement (on SQLite: the writer, while writes are queued). */
  inUse: number;
  /** Callers waiting for a connection (on SQLite: writes queued for the writer). */
  waiting: number;
  /** Database faults since start (./faults.ts): lost connections, an unreachable server, a full disk. */
  faults: number;
}

export interface Store
  extends
    ClientStore,
    ResourceStore,
    UserStore,
    SessionStore,
    GrantStore,
    RevocationStore,
    SigningKeyStore,
    EventStore,
    ThrottleStore,
    WebhookStore,
    PasskeyStore,
    SecondFactorStore,
    RestoreStore,
    RestoreWatchStore,
    EncryptedValueStore,
    UpstreamStore,
    MailStore,
    LogoutDeliveryStore,
    NoticeStore,
    OneTimeStore,
    ConnectionStore,
    DeviceAuthorizationStore {
  /** Deletes what can no longer be used (housekeeping); returns the rows deleted per table. */
  purgeExpired(input: PurgeInput): Promise<Record<string, number>>;
  /** Runs pending migrations (./migrations), or migrates up or down to `to`; returns the names applied or undone. */
  migrate(to?: string | NoMigrations): Promise<string[]>;
  /** The database's migrations against this release's: applied, pending, and those of a newer release. */
  migrationStatus(): Promise<MigrationStatus>;
  /** Lets `resolver` answer getClient for https client ids (Client ID Metadata Documents). */
  resolveClientUrlsWith(resolver: ((clientId: string) => Promise<Client>) | undefined): void;
  /** Forgets cached data (clients), after changes made behind this store's back. */
  clearCaches(): void;
  /** Readiness probe: a trivial query. */
  ping(): Promise<void>;
  /** The connections and faults, for the metrics. */
  stats(): DatabaseStats;
  close(): Promise<void>;
}
