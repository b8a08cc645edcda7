// Upstream providers and the links from a person there to a user here (src/upstream): what the store
// answers about them, the objects (camelCase) and their rows (./tables.ts) both ways, and their
// Kysely code. Read only by sign-in pages, the account page and the CLI: never by a token request.
import { type Kysely, sql } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import type { AggregateClass } from './aggregate.ts';
import { columns, columnsToSet, renamed, someColumns, splitScope } from './columns.ts';
import { insertEvents, insertEventsWhen } from './outbox.ts';
import { fromSession, type Session } from './sessions.ts';
import { rowValues } from './row-values.ts';
import type { Database, UpstreamLinkRow, UpstreamProviderRow } from './tables.ts';
import { fromUser, toUser, type User } from './users.ts';

export type ProviderType = 'oidc' | 'github';

/** An upstream provider a person may sign in with: an OpenID Connect provider, or GitHub. */
export interface UpstreamProvider {
  /** The operator's name for it: in its callback URI, `idp_hint` and TESSERA_DEFAULT_PROVIDER. */
  id: string;
  type: ProviderType;
  /** What the sign-in page's button says. */
  name: string;
  /** The OpenID Connect issuer; null for GitHub. */
  issuer: string | null;
  clientId: string;
  /** The client secret, encrypted (src/upstream/secrets.ts). */
  clientSecretEnc: string;
  scopes: string[];
  /** A verified email the provider states links to the user with that verified email here. */
  trustEmail: boolean;
  /** No user is created at a first sign-in: the person links an account they have. */
  linkOnly: boolean;
  /** The provider's `amr` containing `mfa` counts as two factors. */
  trustUpstreamMfa: boolean;
  /** The provider's own hosts may be on loopback, private or link-local addresses. */
  allowPrivateNetwork: boolean;
  /** Email domains whose login_hint sends the person straight to this provider (lowercase). */
  loginHintDomains: string[];
  /** GitHub's web and REST API bases; null for OpenID Connect. */
  githubUrl: string | null;
  githubApiUrl: string | null;
  /** Its ID-JAGs (identity assertions for Tessera) are redeemed (src/oauth/grants/jwt-bearer.ts). */
  acceptIdJag: boolean;
  createdAt: number;
  updatedAt: number;
}

/** A person at a provider, (providerId, subject), linked to a user here. */
export interface UpstreamLink {
  providerId: string;
  subject: string;
  userId: string;
  /** The email the provider stated when it was linked. */
  email: string | null;
  createdAt: number;
  lastUsedAt: number | null;
}

export interface UpstreamStore {
  /** False when a provider with this id exists already. */
  createProvider(provider: UpstreamProvider, event?: SecurityEvent): Promise<boolean>;
  getProvider(id: string): Promise<UpstreamProvider | undefined>;
  listProviders(): Promise<UpstreamProvider[]>;
  /** Replaces everything but its id, type and creation; false when there is none. */
  updateProvider(provider: UpstreamProvider, event?: SecurityEvent): Promise<boolean>;
  /** Deletes the provider and every link to it, together; the links removed, or undefined when there was none. */
  deleteProvider(id: string, event?: SecurityEvent): Promise<number | undefined>;
  countLinks(providerId: string): Promise<number>;
  getLink(providerId: string, subject: string): Promise<UpstreamLink | undefined>;
  /** The user's links, oldest first. */
  listLinks(userId: string): Promise<UpstreamLink[]>;
  /**
   * Links a person to a user, with its event; false (and no event) when that person is linked
   * already, or the user has a link to that provider already.
   */
  createLink(link: UpstreamLink, event?: SecurityEvent): Promise<boolean>;
  /**
   * A sign-in that links (src/upstream/accounts.ts): the link, and the session and `events` only if
   * the link was made, in one write; false, and nothing written, when createLink would refuse it.
   */
  createSessionWithLink(session: Session, link: UpstreamLink, events: SecurityEvent[]): Promise<boolean>;
  /** A new user and their first link, in one transaction (a first sign-in). Throws when either exists. */
  createUserWithLink(user: User, link: UpstreamLink, events: SecurityEvent[]): Promise<void>;
  /** False when the user has no link to that provider. */
  deleteLink(providerId: string, userId: string, event?: SecurityEvent): Promise<boolean>;
  /** A sign-in through the link: its time, and the event that records it. */
  touchLink(providerId: string, subject: string, now: number, event?: SecurityEvent): Promise<void>;
  /** Users whose email is `email`, in any letter case. */
  findUsersByEmail(email: string): Promise<User[]>;
}

/** The provider's columns its object only renames; its flags and lists are written out below. */
const providerRows = renamed(
  someColumns<UpstreamProviderRow>()(
    'id type name issuer client_id client_secret_enc github_url github_api_url created_at updated_at',
  ),
);

function toProvider(row: UpstreamProviderRow): UpstreamProvider {
  return {
    ...providerRows.to(row),
    scopes: splitScope(row.scope),
    trustEmail: row.trust_email === 1,
    linkOnly: row.link_only === 1,
    trustUpstreamMfa: row.trust_upstream_mfa === 1,
    allowPrivateNetwork: row.allow_private_network === 1,
    loginHintDomains: splitScope(row.login_hint_domains),
    acceptIdJag: row.accept_id_jag === 1,
  };
}

function fromProvider(provider: UpstreamProvider): UpstreamProviderRow {
  return {
    ...providerRows.from(provider),
    scope: provider.scopes.join(' '),
    trust_email: provider.trustEmail ? 1 : 0,
    link_only: provider.linkOnly ? 1 : 0,
    trust_upstream_mfa: provider.trustUpstreamMfa ? 1 : 0,
    allow_private_network: provider.allowPrivateNetwork ? 1 : 0,
    login_hint_domains: provider.loginHintDomains.join(' '),
    accept_id_jag: provider.acceptIdJag ? 1 : 0,
  };
}

const linkRows = renamed(columns<UpstreamLinkRow>()('provider_id subject user_id email created_at last_used_at'));
const toLink: (row: UpstreamLinkRow) => UpstreamLink = linkRows.to;
const fromLink: (link: UpstreamLink) => UpstreamLinkRow = linkRows.from;

/**
 * The link's row as this write inserts it (its user and time): what is written with the link is
 * conditioned on it, so that it is written with the link or not at all (an insert that may do nothing).
 */
function insertedLink(db: Kysely<Database>, link: UpstreamLink) {
  return db
    .selectFrom('upstream_links')
    .select('provider_id')
    .where('provider_id', '=', link.providerId)
    .where('subject', '=', link.subject)
    .where('user_id', '=', link.userId)
    .where('created_at', '=', link.createdAt);
}

/** Upstream providers and links: the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withUpstream<Base extends AggregateClass>(Base: Base) {
  abstract class Upstream extends Base implements UpstreamStore {
    async createProvider(provider: UpstreamProvider, event?: SecurityEvent): Promise<boolean> {
      const existing = await this.getProvider(provider.id);
      if (existing) return false;
      const inserted = this.db.insertInto('upstream_providers').values(fromProvider(provider));
      return this.changeOne(event, inserted);
    }

    async getProvider(id: string): Promise<UpstreamProvider | undefined> {
      const row = await this.rowWith('upstream_providers', { id });
      return row && toProvider(row);
    }

    async listProviders(): Promise<UpstreamProvider[]> {
      const rows = await this.db.selectFrom('upstream_providers').selectAll().orderBy('name').orderBy('id').execute();
      return rows.map(toProvider);
    }

    async updateProvider(provider: UpstreamProvider, event?: SecurityEvent): Promise<boolean> {
      // Its id, type and creation time stay.
      const set = columnsToSet(fromProvider(provider), ['id', 'type', 'created_at']);
      const updated = this.db.updateTable('upstream_providers').set(set).where('id', '=', provider.id);
      return this.changeOne(event, updated);
    }

    async deleteProvider(id: string, event?: SecurityEvent): Promise<number | undefined> {
      if (!(await this.getProvider(id))) return undefined;
      const links = await this.countLinks(id);
      const deleted = this.db.deleteFrom('upstream_providers').where('id', '=', id);
      const unlinked = this.db.deleteFrom('upstream_links').where('provider_id', '=', id);
      return (await this.changeOne(event, deleted, unlinked)) ? links : undefined;
    }

    async countLinks(providerId: string): Promise<number> {
      const count = (eb: { fn: Kysely<Database>['fn'] }) => eb.fn.countAll<number | string>().as('n');
      const query = this.db.selectFrom('upstream_links').select(count).where('provider_id', '=', providerId);
      return Number((await query.executeTakeFirstOrThrow()).n);
    }

    async getLink(providerId: string, subject: string): Promise<UpstreamLink | undefined> {
      const row = await this.rowWith('upstream_links', { provider_id: providerId, subject });
      return row && toLink(row);
    }

    async listLinks(userId: string): Promise<UpstreamLink[]> {
      const query = this.db.selectFrom('upstream_links').selectAll().where('user_id', '=', userId);
      return (await query.orderBy('created_at').orderBy('provider_id').execute()).map(toLink);
    }

    async createLink(link: UpstreamLink, event?: SecurityEvent): Promise<boolean> {
      const linked = insertedLink(this.db, link);
      const events = event ? insertEventsWhen(this.db, event, linked) : [];
      return (await this.write(this.#insertLink(link), ...events)) === 1;
    }

    async createSessionWithLink(session: Session, link: UpstreamLink, events: SecurityEvent[]): Promise<boolean> {
      const linked = insertedLink(this.db, link);
      const { columns, values } = rowValues(this.db, fromSession(session));
      const started = this.db
        .insertInto('sessions')
        .columns(columns)
        .expression(values.where((eb) => eb.exists(linked)));
      const recorded = events.flatMap((event) => insertEventsWhen(this.db, event, linked));
      return (await this.write(this.#insertLink(link), started, ...recorded)) === 1;
    }

    /** The link's insert, only when neither the person nor the user's provider is linked already. */
    #insertLink(link: UpstreamLink) {
      const { columns, values } = rowValues(this.db, fromLink(link));
      const unlinked = values
        // Either uniqueness, checked in the statement; ON CONFLICT covers a concurrent insert on PostgreSQL.
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('upstream_links')
                .select(sql`1`.as('one'))
                .where((w) =>
                  w.or([
                    w.and([w('provider_id', '=', link.providerId), w('subject', '=', link.subject)]),
                    w.and([w('user_id', '=', link.userId), w('provider_id', '=', link.providerId)]),
                  ]),
                ),
            ),
          ),
        );
      return this.db
        .insertInto('upstream_links')
        .columns(columns)
        .expression(unlinked)
        .onConflict((c) => c.doNothing());
    }

    async createUserWithLink(user: User, link: UpstreamLink, events: SecurityEvent[]): Promise<void> {
      await this.write(
        this.db.insertInto('users').values(fromUser(user)),
        this.db.insertInto('upstream_links').values(fromLink(link)),
        ...insertEvents(this.db, events),
      );
    }

    async deleteLink(providerId: string, userId: string, event?: SecurityEvent): Promise<boolean> {
      const deleted = this.db
        .deleteFrom('upstream_links')
        .where('provider_id', '=', providerId)
        .where('user_id', '=', userId);
      return this.changeOne(event, deleted);
    }

    async touchLink(providerId: string, subject: string, now: number, event?: SecurityEvent): Promise<void> {
      const touched = this.db
        .updateTable('upstream_links')
        .set({ last_used_at: now })
        .where('provider_id', '=', providerId)
        .where('subject', '=', subject);
      await this.write(touched, ...this.events(event));
    }

    async findUsersByEmail(email: string): Promise<User[]> {
      const rows = await this.db
        .selectFrom('users')
        .selectAll()
        .where(sql`lower(email)`, '=', email.toLowerCase())
        .orderBy('created_at')
        .execute();
      return rows.map(toUser);
    }
  }
  return Upstream;
}
