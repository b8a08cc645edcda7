// Clients: what the store answers about them, the client (camelCase) and its row (./tables.ts) both
// ways, and their Kysely code. Clients are read on every authorization and token request, so they
// are cached for a few seconds (./client-cache.ts); the client ids that are https URLs (Client ID
// Metadata Documents) are resolved by src/oauth/registration/documents.ts and never stored.
import type { ExpressionBuilder, Insertable, Selectable } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import { Aggregate } from './aggregate.ts';
import { ClientCache } from './client-cache.ts';
import { columnsToSet, splitScope } from './columns.ts';
import type { ClientRow, Database } from './tables.ts';

export type TokenEndpointAuthMethod =
  'client_secret_basic' | 'client_secret_post' | 'client_secret_jwt' | 'private_key_jwt' | 'none';

/** A JWK Set (RFC 7517 §5) of a client's public keys. */
export interface ClientJwks {
  keys: Array<Record<string, unknown>>;
}

export interface Client {
  clientId: string;
  /** SHA-256 hex of the secret; null for public clients. */
  secretHash: string | null;
  name: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  /** Scopes this client may request. */
  scopes: string[];
  grantTypes: string[];
  /** Origins besides a public client's redirect URIs' that may call the token endpoints from a browser. */
  allowedOrigins: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** First-party clients skip the consent page. */
  firstParty: boolean;
  idTokenSignedResponseAlg: string | null;
  createdAt: number;
  /**
   * Who vouches for it: the operator (`tessera clients create`), nobody but itself (RFC 7591
   * registration), or the document its https client_id names (a Client ID Metadata Document, never stored).
   */
  registeredVia: 'operator' | 'dynamic' | 'document';
  /** The user who registered it with their access token; null otherwise. */
  ownerId: string | null;
  /** SHA-256 hex of the registration access token (RFC 7592); null when it was not registered so. */
  registrationTokenHash: string | null;
  /** Descriptive metadata (RFC 7591 §2), shown and returned as given, never trusted. */
  metadata: ClientDescription;
  /** The secret before a rotation with a grace period, accepted until `expiresAt` (epoch seconds). */
  previousSecret: { hash: string; expiresAt: number } | null;
  /** Its own token lifetimes, seconds; null for the server's (src/oauth/grants/lifetimes.ts). */
  lifetimes: TokenLifetimes;
  /** Its sign-ins need two factors (`--require-mfa`, src/authn/policy.ts); absent: false. */
  requireMfa?: boolean;
  // Migration 017's (a client's keys and pushed requests): absent or null, none (null clears it on update).
  /** Its public keys (private_key_jwt, request objects), given inline. */
  jwks?: ClientJwks | null;
  /** Where its public keys are published (fetched through src/net/outbound.ts). */
  jwksUri?: string | null;
  /** client_secret_jwt: its secret encrypted under TESSERA_SECRET (src/oauth/client-auth/assertion.ts). */
  secretEncrypted?: string | null;
  /** Its authorization requests must be pushed (RFC 9126 §6, `--require-pushed-authorization-requests`). */
  requirePushedAuthorizationRequests?: boolean | null;
  /** The alg its request objects must be signed with (`none` only if so registered); absent: any asymmetric. */
  requestObjectSigningAlg?: string | null;
  /** Marked by the operator (`--admin`): it alone may hold the `admin` scope (src/admin/roles.ts); absent: false. */
  admin?: boolean;
  /** The roles it may see in tokens (`--roles`), or null (absent) for every role. */
  allowedRoles?: string[] | null;
  /**
   * Back-Channel Logout 1.0 §2.2: where its logout tokens are posted, and whether they must carry
   * `sid`; absent: it is not told of sign-outs (null: an update that removes them).
   */
  backchannelLogout?: LogoutUri | null;
  /**
   * Front-Channel Logout 1.0 §2: the page loaded in a hidden iframe as a session ends, and whether it
   * is given `iss` and `sid`; absent: none (null: an update that removes it).
   */
  frontchannelLogout?: LogoutUri | null;
  /** Its token requests must carry a DPoP proof (RFC 9449 §5.2, `--require-dpop`); absent: false. */
  requireDpop?: boolean;
  /**
   * The audiences it may exchange tokens for (RFC 8693, `--exchange-audience`, src/oauth/grants/token-exchange.ts);
   * absent or empty: none.
   */
  exchangeAudiences?: string[];
}

/** Where a client hears of a session's end, and whether it must be told its `sid`. */
export interface LogoutUri {
  uri: string;
  sessionRequired: boolean;
}

/** How a client hears of a session's end: Back-Channel Logout 1.0, Front-Channel Logout 1.0. */
export const LOGOUT_CHANNELS = ['backchannel', 'frontchannel'] as const;
export type LogoutChannel = (typeof LOGOUT_CHANNELS)[number];

/** A client's token lifetimes in seconds, each shorter than the server's setting or null for it. */
export interface TokenLifetimes {
  accessToken: number | null;
  refreshToken: number | null;
  idToken: number | null;
}

/** The server's lifetimes, for clients that set none of their own. */
export const SERVER_LIFETIMES: TokenLifetimes = Object.freeze({ accessToken: null, refreshToken: null, idToken: null });

const seconds = (value: number | string | null) => (value === null ? null : Number(value));

export interface ClientDescription {
  client_uri?: string;
  logo_uri?: string;
  tos_uri?: string;
  policy_uri?: string;
  contacts?: string[];
  software_id?: string;
  software_version?: string;
}

export interface ClientStore {
  createClient(client: Client, event?: SecurityEvent): Promise<void>;
  /**
   * The client, or undefined. An app registered by a user who is disabled is none while they are (it
   * acts for them, as their webhooks do: ./users.ts setUserDisabled), unless `suspended` is asked for
   * too (the operator's CLI, which shows, changes and deletes it all the same).
   */
  getClient(clientId: string, options?: { suspended?: boolean }): Promise<Client | undefined>;
  listClients(): Promise<Client[]>;
  /** Deletes the client, revokes its grants and forgets consent to it; false when no such client exists. */
  deleteClient(clientId: string, event?: SecurityEvent): Promise<boolean>;
  /**
   * A new secret; `previous` (the old one's hash) is still accepted until its expiry (a rotation's
   * grace period), or null for none. Returns false when no such client exists.
   */
  setClientSecretHash(
    clientId: string,
    secretHash: string,
    event?: SecurityEvent,
    previous?: { hash: string; expiresAt: number } | null,
    /** client_secret_jwt: the new secret encrypted, which the server needs back. */
    secretEncrypted?: string,
  ): Promise<boolean>;
  /** Replaces what a client may change: everything but its id, secret, owner and creation time. */
  updateClient(client: Client, event?: SecurityEvent): Promise<boolean>;
  /** The clients a user registered (RFC 7591), oldest first. */
  listClientsOwnedBy(userId: string): Promise<Client[]>;
  /**
   * The front-channel logouts (Front-Channel Logout 1.0) of the clients signed in from the session
   * `sid`: those with a frontchannel_logout_uri and a grant from it.
   */
  listFrontchannelLogouts(sid: string): Promise<Array<LogoutUri & { clientId: string }>>;
}

function toClient(row: Selectable<ClientRow>): Client {
  return {
    clientId: row.client_id,
    secretHash: row.secret_hash,
    name: row.name,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    postLogoutRedirectUris: JSON.parse(row.post_logout_redirect_uris) as string[],
    scopes: splitScope(row.scope),
    grantTypes: JSON.parse(row.grant_types) as string[],
    allowedOrigins: JSON.parse(row.allowed_origins) as string[],
    tokenEndpointAuthMethod: row.token_endpoint_auth_method,
    firstParty: row.first_party === 1,
    idTokenSignedResponseAlg: row.id_token_signed_response_alg,
    createdAt: row.created_at,
    registeredVia: row.registered_via === 'dynamic' ? 'dynamic' : 'operator',
    ownerId: row.owner_id,
    registrationTokenHash: row.registration_token_hash,
    metadata: JSON.parse(row.metadata) as Client['metadata'],
    previousSecret:
      row.previous_secret_hash === null
        ? null
        : { hash: row.previous_secret_hash, expiresAt: Number(row.previous_secret_expires_at) },
    lifetimes:
      row.access_token_ttl === null && row.refresh_token_ttl === null && row.id_token_ttl === null
        ? SERVER_LIFETIMES
        : {
            accessToken: seconds(row.access_token_ttl),
            refreshToken: seconds(row.refresh_token_ttl),
            idToken: seconds(row.id_token_ttl),
          },
    // Absent before migration 006 and for clients never given the option.
    ...(row.require_mfa === null || row.require_mfa === undefined ? {} : { requireMfa: row.require_mfa === 1 }),
    // Absent before migration 017 and for clients without them.
    ...(row.jwks ? { jwks: JSON.parse(row.jwks) as ClientJwks } : {}),
    ...(row.jwks_uri ? { jwksUri: row.jwks_uri } : {}),
    ...(row.secret_enc ? { secretEncrypted: row.secret_enc } : {}),
    ...(row.require_par === 1 ? { requirePushedAuthorizationRequests: true } : {}),
    ...(row.request_object_signing_alg ? { requestObjectSigningAlg: row.request_object_signing_alg } : {}),
    // Absent before migration 018.
    ...(row.admin === 1 ? { admin: true } : {}),
    ...(row.allowed_roles === null || row.allowed_roles === undefined
      ? {}
      : { allowedRoles: splitScope(row.allowed_roles) }),
    ...(row.backchannel_logout_uri == null
      ? {}
      : {
          backchannelLogout: {
            uri: row.backchannel_logout_uri,
            sessionRequired: Number(row.backchannel_logout_session_required) === 1,
          },
        }),
    // Absent before migration 027.
    ...(row.frontchannel_logout_uri == null
      ? {}
      : {
          frontchannelLogout: {
            uri: row.frontchannel_logout_uri,
            sessionRequired: Number(row.frontchannel_logout_session_required) === 1,
          },
        }),
    // Absent before migration 024 and for clients never given the option.
    ...(row.require_dpop === 1 ? { requireDpop: true } : {}),
    // Absent before migration 025 and for clients without them.
    ...(row.exchange_audiences ? { exchangeAudiences: splitScope(row.exchange_audiences) } : {}),
  };
}

/**
 * Migration 017's columns, written only for a client that says any of them (null: none), so that a
 * database before it takes the others.
 */
function keyColumns(client: Client): Partial<Insertable<ClientRow>> {
  const said = [
    client.jwks,
    client.jwksUri,
    client.secretEncrypted,
    client.requirePushedAuthorizationRequests,
    client.requestObjectSigningAlg,
  ];
  if (said.every((value) => value === undefined)) return {};
  return {
    jwks: client.jwks ? JSON.stringify(client.jwks) : null,
    jwks_uri: client.jwksUri ?? null,
    secret_enc: client.secretEncrypted ?? null,
    require_par: client.requirePushedAuthorizationRequests ? 1 : null,
    request_object_signing_alg: client.requestObjectSigningAlg ?? null,
  };
}

function fromClient(client: Client): Insertable<ClientRow> {
  return {
    client_id: client.clientId,
    secret_hash: client.secretHash,
    name: client.name,
    redirect_uris: JSON.stringify(client.redirectUris),
    post_logout_redirect_uris: JSON.stringify(client.postLogoutRedirectUris),
    scope: client.scopes.join(' '),
    grant_types: JSON.stringify(client.grantTypes),
    allowed_origins: JSON.stringify(client.allowedOrigins),
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    first_party: client.firstParty ? 1 : 0,
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    created_at: client.createdAt,
    registered_via: client.registeredVia,
    owner_id: client.ownerId,
    registration_token_hash: client.registrationTokenHash,
    metadata: JSON.stringify(client.metadata),
    previous_secret_hash: client.previousSecret?.hash ?? null,
    previous_secret_expires_at: client.previousSecret?.expiresAt ?? null,
    access_token_ttl: client.lifetimes.accessToken,
    refresh_token_ttl: client.lifetimes.refreshToken,
    id_token_ttl: client.lifetimes.idToken,
    // Written only when said, so that a database before migration 006 takes the other columns.
    ...(client.requireMfa === undefined ? {} : { require_mfa: client.requireMfa ? 1 : 0 }),
    ...keyColumns(client),
    // Likewise before migration 018.
    ...(client.admin === undefined ? {} : { admin: client.admin ? 1 : 0 }),
    ...(client.allowedRoles === undefined ? {} : { allowed_roles: client.allowedRoles?.join(' ') ?? null }),
    // Written only when said (or removed), so that a database before migration 020 takes the others.
    ...(client.backchannelLogout === undefined
      ? {}
      : {
          backchannel_logout_uri: client.backchannelLogout?.uri ?? null,
          backchannel_logout_session_required: client.backchannelLogout?.sessionRequired ? 1 : 0,
        }),
    // Likewise before migration 027.
    ...(client.frontchannelLogout === undefined
      ? {}
      : {
          frontchannel_logout_uri: client.frontchannelLogout?.uri ?? null,
          frontchannel_logout_session_required: client.frontchannelLogout?.sessionRequired ? 1 : 0,
        }),
    // Likewise before migration 024.
    ...(client.requireDpop === undefined ? {} : { require_dpop: client.requireDpop ? 1 : 0 }),
    // Likewise before migration 025.
    ...(client.exchangeAudiences === undefined
      ? {}
      : { exchange_audiences: client.exchangeAudiences.length > 0 ? client.exchangeAudiences.join(' ') : null }),
  };
}

export class Clients extends Aggregate implements ClientStore {
  readonly #cache = new ClientCache<Client>();
  #documents: ((clientId: string) => Promise<Client>) | undefined;

  async createClient(client: Client, event?: SecurityEvent): Promise<void> {
    this.#cache.forget(client.clientId);
    await this.write(this.db.insertInto('clients').values(fromClient(client)), ...this.events(event));
  }

  /**
   * Resolves the client ids that are https URLs (Client ID Metadata Documents,
   * src/oauth/registration/documents.ts); without it they are looked up like any other id.
   */
  resolveClientUrlsWith(resolver: ((clientId: string) => Promise<Client>) | undefined): void {
    this.#documents = resolver;
  }

  /** The cache's loader, made once: a client is read on every token request. */
  readonly #load = (clientId: string) => this.#read(clientId, false);

  getClient(clientId: string, options?: { suspended?: boolean }): Promise<Client | undefined> {
    // Tessera's own ids never start with https:// (../tokens/opaque.ts newId).
    if (this.#documents && clientId.startsWith('https://')) return this.#documents(clientId);
    if (options?.suspended) return this.#read(clientId, true);
    return this.#cache.get(clientId, this.#load);
  }

  async #read(clientId: string, suspended: boolean): Promise<Client | undefined> {
    let query = this.db.selectFrom('clients').selectAll().where('client_id', '=', clientId);
    if (!suspended) {
      const disabledOwner = (eb: ExpressionBuilder<Database, 'clients'>) =>
        eb.exists(
          eb
            .selectFrom('users as o')
            .select('o.id')
            .whereRef('o.id', '=', 'clients.owner_id')
            .where('o.disabled', '=', 1),
        );
      query = query.where((eb) => eb.not(disabledOwner(eb)));
    }
    const row = await query.executeTakeFirst();
    return row && toClient(row);
  }

  /** Forgets the cached clients, after changes made behind this store's back. */
  clearCache(): void {
    this.#cache.clear();
  }

  async listClients(): Promise<Client[]> {
    const rows = await this.db.selectFrom('clients').selectAll().orderBy('created_at').orderBy('client_id').execute();
    return rows.map(toClient);
  }

  async deleteClient(clientId: string, event?: SecurityEvent): Promise<boolean> {
    this.#cache.forget(clientId);
    const now = event?.at ?? Math.floor(Date.now() / 1000);
    const deleted = this.db.deleteFrom('clients').where('client_id', '=', clientId);
    // Its tokens end with it: the access tokens too, which are checked against their grant.
    const live = (eb: ExpressionBuilder<Database, 'grants'>) => eb.and({ client_id: clientId, revoked_at: null });
    const revoked = this.db.updateTable('grants').set({ revoked_at: now }).where(live);
    const consents = this.db.deleteFrom('consents').where('client_id', '=', clientId);
    const connections = this.db.deleteFrom('connections').where('client_id', '=', clientId);
    return this.changeOne(event, deleted, revoked, consents, connections);
  }

  async setClientSecretHash(
    clientId: string,
    secretHash: string,
    event?: SecurityEvent,
    previous: { hash: string; expiresAt: number } | null = null,
    secretEncrypted?: string,
  ): Promise<boolean> {
    this.#cache.forget(clientId);
    const set = {
      secret_hash: secretHash,
      previous_secret_hash: previous?.hash ?? null,
      previous_secret_expires_at: previous?.expiresAt ?? null,
      ...(secretEncrypted === undefined ? {} : { secret_enc: secretEncrypted }),
    };
    const updated = this.db.updateTable('clients').set(set).where('client_id', '=', clientId);
    return this.changeOne(event, updated);
  }

  async updateClient(client: Client, event?: SecurityEvent): Promise<boolean> {
    this.#cache.forget(client.clientId);
    // Its id, owner, origin and creation time stay.
    const set = columnsToSet(fromClient(client), ['client_id', 'owner_id', 'created_at', 'registered_via']);
    const updated = this.db.updateTable('clients').set(set).where('client_id', '=', client.clientId);
    return this.changeOne(event, updated);
  }

  async listClientsOwnedBy(userId: string): Promise<Client[]> {
    const owned = this.db.selectFrom('clients').selectAll().where('owner_id', '=', userId);
    return (await owned.orderBy('created_at').orderBy('client_id').execute()).map(toClient);
  }

  async listFrontchannelLogouts(sid: string): Promise<Array<LogoutUri & { clientId: string }>> {
    const rows = await this.db
      .selectFrom('clients as c')
      .select(['c.client_id', 'c.frontchannel_logout_uri', 'c.frontchannel_logout_session_required'])
      .where('c.frontchannel_logout_uri', 'is not', null)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('grants as g')
            .select('g.id')
            .where('g.sid', '=', sid)
            .whereRef('g.client_id', '=', 'c.client_id'),
        ),
      )
      .orderBy('c.client_id')
      .execute();
    return rows.map((row) => ({
      clientId: row.client_id,
      uri: row.frontchannel_logout_uri!,
      sessionRequired: Number(row.frontchannel_logout_session_required) === 1,
    }));
  }
}
