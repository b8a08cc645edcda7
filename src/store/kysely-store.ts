// The Store both databases share: each aggregate's Kysely code (./clients.ts, ./users.ts, …), called
// by one line per method, so that "go to definition" from here lands on the code that runs. SQLite
// (./sqlite/store.ts) and PostgreSQL (./postgres/store.ts) extend it with the two hot writes, a
// code's redemption and a refresh, which each does its own way, and their connections' lifecycle.
import { type Kysely, type NoMigrations, sql } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import type { Connection } from './aggregate.ts';
import { type Client, Clients } from './clients.ts';
import { type Connection as AgentConnection, Connections } from './connections.ts';
import { type EncryptedValue, EncryptedValues } from './encrypted.ts';
import { type EventFilter, Events } from './events.ts';
import { type ChallengeUse, type Passkey, Passkeys, type PasskeyUse } from './passkeys.ts';
import { type Mail, Mails, type QueuedMail, type Redemption, type TokenPurpose } from './mails.ts';
import { LogoutDeliveries } from './logout-deliveries.ts';
import { type NoticeRule, Notices } from './notices.ts';
import { type Grant, Grants, type Rotation, type RotationOutcome, type TokenFamily } from './grants.ts';
import { Purge, type PurgeInput } from './housekeeping.ts';
import { migrate, type MigrationStatus, migrationStatus } from './migrations/index.ts';
import { OneTime, type PushedRequest } from './one-time.ts';
import { type DeviceAuthorization, DeviceAuthorizations, type DeviceDecision } from './device-authorizations.ts';
import { type Resource, Resources } from './resources.ts';
import { RestoreWatch, type RestoreWatchState, type RestoreWatchStore } from './restore-watch.ts';
import { Restores } from './restores.ts';
import { SecondFactors, type TotpCredential } from './second-factors.ts';
import { type Session, Sessions } from './sessions.ts';
import { type StoredSigningKey, SigningKeys } from './signing-keys.ts';
import type { DatabaseStats, Store } from './store.ts';
import type { Database } from './tables.ts';
import { Throttles } from './throttles.ts';
import type { ThrottlePolicy } from '../authn/throttle.ts';
import { type UpstreamLink, type UpstreamProvider, Upstream } from './upstream.ts';
import { type User, Users } from './users.ts';
import { type Delivery, type DeliveryAttempt, type LaneClaim, type Webhook, Webhooks } from './webhooks.ts';
import type { OutboxOutcome } from '../events/outbox.ts';

export abstract class KyselyStore implements Store {
  readonly db: Kysely<Database>;
  protected readonly clients: Clients;
  protected readonly resources: Resources;
  protected readonly users: Users;
  protected readonly sessions: Sessions;
  protected readonly grants: Grants;
  protected readonly signingKeys: SigningKeys;
  protected readonly events: Events;
  protected readonly throttles: Throttles;
  protected readonly webhooks: Webhooks;
  protected readonly passkeys: Passkeys;
  protected readonly secondFactors: SecondFactors;
  protected readonly restores: Restores;
  protected readonly restoreWatch: RestoreWatch;
  protected readonly encryptedValues: EncryptedValues;
  protected readonly upstream: Upstream;
  protected readonly mails: Mails;
  protected readonly logoutDeliveries: LogoutDeliveries;
  protected readonly notices: Notices;
  protected readonly oneTime: OneTime;
  protected readonly connections: Connections;
  protected readonly deviceAuthorizations: DeviceAuthorizations;
  readonly #purge: Purge;

  constructor(connection: Connection) {
    this.db = connection.db;
    this.clients = new Clients(connection);
    this.resources = new Resources(connection);
    this.users = new Users(connection);
    this.sessions = new Sessions(connection);
    this.grants = new Grants(connection);
    this.signingKeys = new SigningKeys(connection);
    this.events = new Events(connection);
    this.throttles = new Throttles(connection);
    this.webhooks = new Webhooks(connection);
    this.passkeys = new Passkeys(connection);
    this.secondFactors = new SecondFactors(connection);
    this.restores = new Restores(connection);
    this.restoreWatch = new RestoreWatch(connection);
    this.encryptedValues = new EncryptedValues(connection);
    this.upstream = new Upstream(connection);
    this.mails = new Mails(connection);
    this.logoutDeliveries = new LogoutDeliveries(connection);
    this.notices = new Notices(connection);
    this.oneTime = new OneTime(connection);
    this.connections = new Connections(connection);
    this.deviceAuthorizations = new DeviceAuthorizations(connection);
    this.#purge = new Purge(connection);
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
    this.clients.clearCache();
    this.resources.clearCache();
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  purgeExpired(input: PurgeInput) {
    return this.#purge.purgeExpired(input);
  }

  // clients (./clients.ts)
  createClient(client: Client, event?: SecurityEvent) {
    return this.clients.createClient(client, event);
  }
  getClient(clientId: string, options?: { suspended?: boolean }) {
    return this.clients.getClient(clientId, options);
  }
  resolveClientUrlsWith(resolver: ((clientId: string) => Promise<Client>) | undefined) {
    return this.clients.resolveClientUrlsWith(resolver);
  }
  listClients() {
    return this.clients.listClients();
  }
  deleteClient(clientId: string, event?: SecurityEvent) {
    return this.clients.deleteClient(clientId, event);
  }
  setClientSecretHash(...args: Parameters<Clients['setClientSecretHash']>) {
    return this.clients.setClientSecretHash(...args);
  }
  updateClient(client: Client, event?: SecurityEvent) {
    return this.clients.updateClient(client, event);
  }
  listClientsOwnedBy(userId: string) {
    return this.clients.listClientsOwnedBy(userId);
  }
  listFrontchannelLogouts(sid: string) {
    return this.clients.listFrontchannelLogouts(sid);
  }

  // one-time ids and pushed authorization requests (./one-time.ts)
  useOnce(id: string, expiresAt: number) {
    return this.oneTime.useOnce(id, expiresAt);
  }
  pushRequest(id: string, request: PushedRequest, expiresAt: number) {
    return this.oneTime.pushRequest(id, request, expiresAt);
  }
  takePushedRequest(id: string, now: number) {
    return this.oneTime.takePushedRequest(id, now);
  }

  // ID-JAG connections (./connections.ts)
  createConnection(connection: AgentConnection, event?: SecurityEvent) {
    return this.connections.createConnection(connection, event);
  }
  getConnection(id: string) {
    return this.connections.getConnection(id);
  }
  findConnection(clientId: string, audience: string) {
    return this.connections.findConnection(clientId, audience);
  }
  listConnections(clientId?: string) {
    return this.connections.listConnections(clientId);
  }
  updateConnection(connection: AgentConnection, event?: SecurityEvent) {
    return this.connections.updateConnection(connection, event);
  }
  deleteConnection(id: string, event?: SecurityEvent) {
    return this.connections.deleteConnection(id, event);
  }

  // device authorizations, RFC 8628 (./device-authorizations.ts)
  createDeviceAuthorization(authorization: DeviceAuthorization) {
    return this.deviceAuthorizations.createDeviceAuthorization(authorization);
  }
  getDeviceAuthorizationByDeviceCode(deviceCodeHash: string) {
    return this.deviceAuthorizations.getDeviceAuthorizationByDeviceCode(deviceCodeHash);
  }
  getDeviceAuthorizationByUserCode(userCodeHash: string) {
    return this.deviceAuthorizations.getDeviceAuthorizationByUserCode(userCodeHash);
  }
  decideDeviceAuthorization(id: string, decision: DeviceDecision, now: number, event: SecurityEvent) {
    return this.deviceAuthorizations.decideDeviceAuthorization(id, decision, now, event);
  }
  recordDevicePoll(id: string, previousPoll: number | null, now: number, interval: number) {
    return this.deviceAuthorizations.recordDevicePoll(id, previousPoll, now, interval);
  }

  // APIs, RFC 8707 (./resources.ts)
  createResource(resource: Resource, event?: SecurityEvent) {
    return this.resources.createResource(resource, event);
  }
  getResource(uri: string) {
    return this.resources.getResource(uri);
  }
  listResources() {
    return this.resources.listResources();
  }
  updateResource(resource: Resource, event?: SecurityEvent) {
    return this.resources.updateResource(resource, event);
  }
  deleteResource(uri: string, event?: SecurityEvent) {
    return this.resources.deleteResource(uri, event);
  }

  // users (./users.ts)
  createUser(user: User, event?: SecurityEvent) {
    return this.users.createUser(user, event);
  }
  getUserById(id: string) {
    return this.users.getUserById(id);
  }
  getUserByUsername(username: string) {
    return this.users.getUserByUsername(username);
  }
  listUsers() {
    return this.users.listUsers();
  }
  setUserPassword(id: string, passwordHash: string, now: number, event?: SecurityEvent) {
    return this.users.setUserPassword(id, passwordHash, now, event);
  }
  setUserDisabled(id: string, disabled: boolean, now: number, event?: SecurityEvent) {
    return this.users.setUserDisabled(id, disabled, now, event);
  }
  async deleteUser(id: string, now: number, event?: SecurityEvent) {
    const deleted = await this.users.deleteUser(id, now, event);
    // The apps the user registered went with them.
    this.clients.clearCache();
    return deleted;
  }
  changePassword(
    input: { userId: string; passwordHash: string; now: number; keepSession: string },
    event: SecurityEvent,
  ) {
    return this.users.changePassword(input, event);
  }
  countUsers() {
    return this.users.countUsers();
  }
  updateUserProfile(user: User, events: SecurityEvent[]) {
    return this.users.updateUserProfile(user, events);
  }
  searchUsers(query: { search?: string; after?: string; limit?: number }) {
    return this.users.searchUsers(query);
  }
  setUserRoles(id: string, roles: readonly string[], now: number, events: SecurityEvent[]) {
    return this.users.setUserRoles(id, roles, now, events);
  }

  // sessions and consent (./sessions.ts)
  createSession(session: Session, event?: SecurityEvent) {
    return this.sessions.createSession(session, event);
  }
  getSessionAndUser(id: string, now: number, clientId?: string) {
    return this.sessions.getSessionAndUser(id, now, clientId);
  }
  deleteSession(id: string, event?: SecurityEvent, logout?: { now: number }) {
    return this.sessions.deleteSession(id, event, logout);
  }
  listSessionsOf(userId: string, now: number) {
    return this.sessions.listSessionsOf(userId, now);
  }
  signOutEverywhere(input: { userId: string; now: number; revokeGrants: boolean }, events: SecurityEvent[]) {
    return this.sessions.signOutEverywhere(input, events);
  }
  getConsentedScopes(userId: string, clientId: string) {
    return this.sessions.getConsentedScopes(userId, clientId);
  }
  saveConsent(userId: string, clientId: string, scopes: string[], now: number, event?: SecurityEvent) {
    return this.sessions.saveConsent(userId, clientId, scopes, now, event);
  }

  // grants and access tokens revoked (./grants.ts)
  getGrant(id: string) {
    return this.grants.getGrant(id);
  }
  getTokenFamily(grantId: string) {
    return this.grants.getTokenFamily(grantId);
  }
  revokeGrant(id: string, now: number, event?: SecurityEvent) {
    return this.grants.revokeGrant(id, now, event);
  }
  listActiveGrants(userId: string, now: number) {
    return this.grants.listActiveGrants(userId, now);
  }
  withdrawClient(userId: string, clientId: string, now: number, event?: SecurityEvent) {
    return this.grants.withdrawClient(userId, clientId, now, event);
  }
  withdrawClientFromAll(clientId: string, now: number, event?: SecurityEvent) {
    return this.grants.withdrawClientFromAll(clientId, now, event);
  }
  revokeAccessToken(jti: string, expiresAt: number, event?: SecurityEvent) {
    return this.grants.revokeAccessToken(jti, expiresAt, event);
  }
  getAccessTokenState(input: { userId: string; grantId: string; jti: string }) {
    return this.grants.getAccessTokenState(input);
  }

  // signing keys (./signing-keys.ts)
  listSigningKeys() {
    return this.signingKeys.listSigningKeys();
  }
  insertSigningKey(key: StoredSigningKey, event?: SecurityEvent) {
    return this.signingKeys.insertSigningKey(key, event);
  }
  activateSigningKey(kid: string, at: number, event?: SecurityEvent) {
    return this.signingKeys.activateSigningKey(kid, at, event);
  }
  deleteSigningKeys(kids: string[]) {
    return this.signingKeys.deleteSigningKeys(kids);
  }

  // the audit trail (./events.ts)
  recordEvent(event: SecurityEvent) {
    return this.events.recordEvent(event);
  }
  listEvents(filter: EventFilter) {
    return this.events.listEvents(filter);
  }

  // throttling (./throttles.ts)
  getThrottles(keys: string[]) {
    return this.throttles.getThrottles(keys);
  }
  countAttempts(input: Parameters<Throttles['countAttempts']>[0]) {
    return this.throttles.countAttempts(input);
  }
  settleAttempts(input: Parameters<Throttles['settleAttempts']>[0]) {
    return this.throttles.settleAttempts(input);
  }
  recordFailures(input: { keys: Array<{ key: string; subject: string }>; now: number; window: number }) {
    return this.throttles.recordFailures(input);
  }
  clearThrottles(keys: string[]) {
    return this.throttles.clearThrottles(keys);
  }
  clearThrottlesOf(subject: string, event?: SecurityEvent) {
    return this.throttles.clearThrottlesOf(subject, event);
  }
  getThrottlesOf(subject: string) {
    return this.throttles.getThrottlesOf(subject);
  }
  countLockedAccounts(now: number, policy: ThrottlePolicy) {
    return this.throttles.countLockedAccounts(now, policy);
  }

  // webhooks (./webhooks.ts)
  createWebhook(webhook: Webhook, event?: SecurityEvent, perOwner?: number) {
    return this.webhooks.createWebhook(webhook, event, perOwner);
  }
  getWebhook(id: string) {
    return this.webhooks.getWebhook(id);
  }
  listWebhooks(ownerId?: string | null) {
    return this.webhooks.listWebhooks(ownerId);
  }
  updateWebhook(id: string, changes: { url: string; events: string }, event?: SecurityEvent) {
    return this.webhooks.updateWebhook(id, changes, event);
  }
  deleteWebhook(id: string, event?: SecurityEvent) {
    return this.webhooks.deleteWebhook(id, event);
  }
  rotateWebhookSecret(
    id: string,
    secrets: { secretEnc: string; previousSecretEnc: string; previousUntil: number },
    event?: SecurityEvent,
  ) {
    return this.webhooks.rotateWebhookSecret(id, secrets, event);
  }
  enqueueDelivery(delivery: Delivery, event?: SecurityEvent) {
    return this.webhooks.enqueueDelivery(delivery, event);
  }
  claimDeliveries(now: number, lease: number, limit: number, lane: LaneClaim) {
    return this.webhooks.claimDeliveries(now, lease, limit, lane);
  }
  recordAttempt(attempt: DeliveryAttempt, outcome: OutboxOutcome<'delivered'>) {
    return this.webhooks.recordAttempt(attempt, outcome);
  }
  getDelivery(id: string) {
    return this.webhooks.getDelivery(id);
  }
  listDeliveries(webhookId: string, limit: number) {
    return this.webhooks.listDeliveries(webhookId, limit);
  }
  deliveryBacklog() {
    return this.webhooks.deliveryBacklog();
  }
  listAttempts(deliveryId: string) {
    return this.webhooks.listAttempts(deliveryId);
  }
  redeliver(id: string, now: number, event?: SecurityEvent) {
    return this.webhooks.redeliver(id, now, event);
  }

  // passkeys (./passkeys.ts)
  listPasskeys(userId: string) {
    return this.passkeys.listPasskeys(userId);
  }
  hasPasskeys(userId: string) {
    return this.passkeys.hasPasskeys(userId);
  }
  getPasskeyByCredentialId(credentialId: string) {
    return this.passkeys.getPasskeyByCredentialId(credentialId);
  }
  spendChallenge(use: ChallengeUse) {
    return this.passkeys.spendChallenge(use);
  }
  addPasskey(passkey: Passkey, event: SecurityEvent) {
    return this.passkeys.addPasskey(passkey, event);
  }
  recordPasskeyUse(use: PasskeyUse) {
    return this.passkeys.recordPasskeyUse(use);
  }
  suspendPasskey(input: { userId: string; id: string; at: number }, event: SecurityEvent) {
    return this.passkeys.suspendPasskey(input, event);
  }
  renamePasskey(input: { userId: string; id: string; name: string }, event: SecurityEvent) {
    return this.passkeys.renamePasskey(input, event);
  }
  removePasskey(input: { userId: string; id: string; keepSession: string }, event: SecurityEvent) {
    return this.passkeys.removePasskey(input, event);
  }

  // restores (./restores.ts)
  fenceRestore(input: { id: string; now: number; force: boolean; event: SecurityEvent }) {
    return this.restores.fenceRestore(input);
  }
  restoreEpoch() {
    return this.restores.restoreEpoch();
  }

  // restores detected (./restore-watch.ts)
  readRestoreWatch(input: { newDatabase: string; knownEpoch: string; now: number }): Promise<RestoreWatchState> {
    return this.restoreWatch.readRestoreWatch(input);
  }
  markActivity(input: Parameters<RestoreWatchStore['markActivity']>[0]) {
    return this.restoreWatch.markActivity(input);
  }
  fenceDetectedRestore(input: Parameters<RestoreWatchStore['fenceDetectedRestore']>[0]) {
    return this.restoreWatch.fenceDetectedRestore(input);
  }
  recordTimeline(timeline: number) {
    return this.restoreWatch.recordTimeline(timeline);
  }

  // values encrypted under TESSERA_SECRET (./encrypted.ts)
  listEncryptedValues() {
    return this.encryptedValues.listEncryptedValues();
  }
  replaceEncryptedValues(changes: Array<EncryptedValue & { replacement: string }>) {
    return this.encryptedValues.replaceEncryptedValues(changes);
  }

  // authenticator apps and recovery codes (./second-factors.ts)
  getTotp(userId: string) {
    return this.secondFactors.getTotp(userId);
  }
  hasTotp(userId: string) {
    return this.secondFactors.hasTotp(userId);
  }
  enrolTotp(credential: TotpCredential, recoveryCodes: string[], event: SecurityEvent) {
    return this.secondFactors.enrolTotp(credential, recoveryCodes, event);
  }
  useTotpStep(input: { userId: string; step: number; at: number }) {
    return this.secondFactors.useTotpStep(input);
  }
  removeTotp(input: { userId: string; keepSession: string; recoveryCodes: boolean }, event: SecurityEvent) {
    return this.secondFactors.removeTotp(input, event);
  }
  hasRecoveryCodes(userId: string) {
    return this.secondFactors.hasRecoveryCodes(userId);
  }
  recoveryCodeSummary(userId: string) {
    return this.secondFactors.recoveryCodeSummary(userId);
  }
  replaceRecoveryCodes(input: { userId: string; hashes: string[]; now: number }, event: SecurityEvent) {
    return this.secondFactors.replaceRecoveryCodes(input, event);
  }
  useRecoveryCode(input: { userId: string; hash: string; at: number }, event: SecurityEvent) {
    return this.secondFactors.useRecoveryCode(input, event);
  }
  resetSecondFactors(userId: string, event: SecurityEvent) {
    return this.secondFactors.resetSecondFactors(userId, event);
  }

  // upstream providers and links (./upstream.ts)
  createProvider(provider: UpstreamProvider, event?: SecurityEvent) {
    return this.upstream.createProvider(provider, event);
  }
  getProvider(id: string) {
    return this.upstream.getProvider(id);
  }
  listProviders() {
    return this.upstream.listProviders();
  }
  updateProvider(provider: UpstreamProvider, event?: SecurityEvent) {
    return this.upstream.updateProvider(provider, event);
  }
  deleteProvider(id: string, event?: SecurityEvent) {
    return this.upstream.deleteProvider(id, event);
  }
  countLinks(providerId: string) {
    return this.upstream.countLinks(providerId);
  }
  getLink(providerId: string, subject: string) {
    return this.upstream.getLink(providerId, subject);
  }
  listLinks(userId: string) {
    return this.upstream.listLinks(userId);
  }
  createLink(link: UpstreamLink, event?: SecurityEvent) {
    return this.upstream.createLink(link, event);
  }
  createSessionWithLink(session: Session, link: UpstreamLink, events: SecurityEvent[]) {
    return this.upstream.createSessionWithLink(session, link, events);
  }
  createUserWithLink(user: User, link: UpstreamLink, events: SecurityEvent[]) {
    return this.upstream.createUserWithLink(user, link, events);
  }
  deleteLink(providerId: string, userId: string, event?: SecurityEvent) {
    return this.upstream.deleteLink(providerId, userId, event);
  }
  touchLink(providerId: string, subject: string, now: number, event?: SecurityEvent) {
    return this.upstream.touchLink(providerId, subject, now, event);
  }
  findUsersByEmail(email: string) {
    return this.upstream.findUsersByEmail(email);
  }

  // logout tokens (./logout-deliveries.ts)
  claimLogoutDeliveries(now: number, lease: number, limit: number) {
    return this.logoutDeliveries.claimLogoutDeliveries(now, lease, limit);
  }
  recordLogoutAttempt(
    id: string,
    attempt: { attempt: number; at: number; error: string | null },
    outcome: OutboxOutcome<'delivered'>,
  ) {
    return this.logoutDeliveries.recordLogoutAttempt(id, attempt, outcome);
  }
  listLogoutDeliveries(limit: number) {
    return this.logoutDeliveries.listLogoutDeliveries(limit);
  }

  // mails (./mails.ts)
  queueMail(input: QueuedMail) {
    return this.mails.queueMail(input);
  }
  getMailToken(hash: string) {
    return this.mails.getMailToken(hash);
  }
  liveMailToken(userId: string, purpose: TokenPurpose, now: number) {
    return this.mails.liveMailToken(userId, purpose, now);
  }
  redeemMailToken(
    input: { hash: string; purpose: TokenPurpose; now: number; nonce: string },
    effect: Redemption,
    extras?: { event?: SecurityEvent; mail?: Mail },
  ) {
    return this.mails.redeemMailToken(input, effect, extras);
  }
  claimMails(now: number, lease: number, limit: number) {
    return this.mails.claimMails(now, lease, limit);
  }
  recordMailAttempt(
    id: string,
    attempt: { attempt: number; at: number; error: string | null },
    outcome: OutboxOutcome<'sent'>,
  ) {
    return this.mails.recordMailAttempt(id, attempt, outcome);
  }
  listMails(limit: number) {
    return this.mails.listMails(limit);
  }
  untoldEvents(input: { rules: readonly NoticeRule[]; since: number; limit: number }) {
    return this.notices.untoldEvents(input);
  }
  queueNotices(mails: Mail[]) {
    return this.notices.queueNotices(mails);
  }
}
