// The Store both databases share: each aggregate's Kysely code (./clients.ts, ./users.ts, …) on one
// class, every aggregate's class on top of the one before it, so that the Store's methods are the
// aggregates' own and "go to definition" lands on the code that runs. SQLite (./sqlite/store.ts) and
// PostgreSQL (./postgres/store.ts) extend it with the two hot writes, a code's redemption and a
// refresh, which each does its own way, and their connections' lifecycle.
import { type NoMigrations, sql } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import { Aggregate, type Connection } from './aggregate.ts';
import { withClients } from './clients.ts';
import { withConnections } from './connections.ts';
import { withDeviceAuthorizations } from './device-authorizations.ts';
import { withEncryptedValues } from './encrypted.ts';
import { withEvents } from './events.ts';
import { type Grant, type Rotation, type RotationOutcome, type TokenFamily, withGrants } from './grants.ts';
import { withPurge } from './housekeeping.ts';
import { withLogoutDeliveries } from './logout-deliveries.ts';
import { withMails } from './mails.ts';
import { migrate, type MigrationStatus, migrationStatus } from './migrations/index.ts';
import { withNotices } from './notices.ts';
import { withOneTime } from './one-time.ts';
import { withPasskeys } from './passkeys.ts';
import { withResources } from './resources.ts';
import { withRestoreWatch } from './restore-watch.ts';
import { withRestores } from './restores.ts';
import { withSecondFactors } from './second-factors.ts';
import { withSessions } from './sessions.ts';
import { withSigningKeys } from './signing-keys.ts';
import type { DatabaseStats, Store } from './store.ts';
import { withThrottles } from './throttles.ts';
import { withUpstream } from './upstream.ts';
import { Users } from './users.ts';
import { withWebhooks } from './webhooks.ts';

// Every aggregate's code, by area, each class on top of the one before it (users at the bottom).
const People = withUpstream(withSecondFactors(withPasskeys(withThrottles(withSessions(Users)))));
const Protocol = withConnections(withDeviceAuthorizations(withOneTime(withGrants(withResources(withClients(People))))));
const Outboxes = withNotices(withLogoutDeliveries(withMails(withWebhooks(withEvents(Protocol)))));
const Aggregates = withPurge(withEncryptedValues(withRestoreWatch(withRestores(withSigningKeys(Outboxes)))));

// A name two aggregates both define would leave only the upper one's, which TypeScript does not see
// across classes built on a parameter: checked once, as this module loads.
const defined = new Set<string>();
for (let layer = Aggregates.prototype; layer !== Aggregate.prototype; layer = Object.getPrototypeOf(layer)) {
  for (const name of Object.getOwnPropertyNames(layer)) {
    if (name !== 'constructor' && defined.has(name)) throw new Error(`store: two aggregates define ${name}`);
    defined.add(name);
  }
}

export abstract class KyselyStore extends Aggregates implements Store {
  constructor(connection: Connection) {
    super(connection);
  }

  // Each database's own (./sqlite/store.ts, ./postgres/store.ts).
  abstract redeemAuthorizationCode(input: { grant: Grant }): Promise<boolean>;
  abstract rotateTokenFamily<T>(
    rotation: Rotation,
    whileCommitting: (family: TokenFamily) => Promise<T>,
  ): Promise<RotationOutcome<T>>;
  abstract stats(): DatabaseStats;
  /** PostgreSQL's current timeline (./restore-watch.ts); null on SQLite. */
  abstract databaseTimeline(): Promise<number | null>;

  migrate(to?: string | NoMigrations): Promise<string[]> {
    return migrate(this.db, to);
  }
  migrationStatus(): Promise<MigrationStatus> {
    return migrationStatus(this.db);
  }

  clearCaches(): void {
    this.clearClientCache();
    this.clearResourceCache();
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  override async deleteUser(id: string, now: number, event?: SecurityEvent) {
    const deleted = await super.deleteUser(id, now, event);
    // The apps the user registered went with them.
    this.clearClientCache();
    return deleted;
  }
}
