// Posting logout tokens (OpenID Connect Back-Channel Logout 1.0 §2.5) from their outbox
// (`logout_deliveries`, written in the same transaction as the session's end: src/store/
// logout-deliveries.ts), on the outbox worker webhooks and mails share (../events/outbox.ts): claimed
// for a lease (on PostgreSQL with FOR UPDATE SKIP LOCKED, so that each attempt is made by one
// instance), retried on the webhooks' schedule, surviving a crash. Each attempt signs a fresh token
// (../oidc/logout-token.ts) and POSTs it as `logout_token` (a form, §2.5) through the outbound guard
// (../net/outbound.ts); a 2xx delivers it (§2.8: 200, or 204 as many relying parties answer).
import type { Config } from '../config/index.ts';
import { outboxOutcome, OutboxWorker, type OutboxWorkerOptions } from '../events/outbox.ts';
import { fetchOutbound, OutboundError } from '../net/outbound.ts';
import { signLogoutToken } from '../oidc/logout-token.ts';
import type { ClientStore } from '../store/clients.ts';
import type { LogoutDelivery as Delivery, LogoutDeliveryStore } from '../store/logout-deliveries.ts';
import type { KeyStore, SigningAlg } from '../tokens/keystore.ts';

/** Logout tokens posted at once by one instance. */
const CONCURRENT = 8;
const TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 16 * 1024;

export interface LogoutDeliveryOptions extends OutboxWorkerOptions {
  config: Pick<Config, 'issuer' | 'signingAlg' | 'outboundAllowPrivate'>;
  keys: KeyStore;
}

export class LogoutDelivery extends OutboxWorker<Delivery> {
  readonly #store: LogoutDeliveryStore & Pick<ClientStore, 'getClient'>;
  readonly #options: LogoutDeliveryOptions;

  constructor(store: LogoutDeliveryStore & Pick<ClientStore, 'getClient'>, options: LogoutDeliveryOptions) {
    super('back-channel logout', options);
    this.#store = store;
    this.#options = options;
  }

  protected capacity(): number {
    return CONCURRENT - this.inFlight;
  }

  protected claim(now: number, lease: number, limit: number): Promise<Delivery[]> {
    return this.#store.claimLogoutDeliveries(now, lease, limit);
  }

  protected async attempt(delivery: Delivery): Promise<void> {
    const { config, keys } = this.#options;
    const log = this.log;
    const attempt = delivery.attempts + 1;
    let error: string | null = null;
    let status: number | null = null;
    // The client as it is now: deleted, or its URI removed, while the token waited.
    const client = await this.#store.getClient(delivery.clientId);
    if (!client?.backchannelLogout) {
      error = 'the client no longer has a backchannel_logout_uri';
    } else {
      const alg = (client.idTokenSignedResponseAlg ?? config.signingAlg) as SigningAlg;
      const logoutToken = await signLogoutToken(keys, {
        issuer: config.issuer,
        clientId: delivery.clientId,
        sub: delivery.sub,
        sid: delivery.sid,
        now: this.now(),
        alg,
      });
      try {
        const response = await fetchOutbound(client.backchannelLogout.uri, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Tessera-Logout/1' },
          body: new URLSearchParams({ logout_token: logoutToken }).toString(),
          timeoutMs: TIMEOUT_MS,
          maxBytes: MAX_RESPONSE_BYTES,
          allowPrivate: config.outboundAllowPrivate,
          allowHttp: config.outboundAllowPrivate,
        });
        status = response.status;
        if (status < 200 || status >= 300) error = `the client answered HTTP ${status}`;
      } catch (err) {
        if (!(err instanceof OutboundError)) throw err;
        error = `${err.reason}: ${err.message}`.slice(0, 500);
      }
    }
    const at = this.now();
    const outcome = client?.backchannelLogout
      ? outboxOutcome('delivered', { attempt, retryBase: delivery.retryBase, at, succeeded: error === null })
      : ({ status: 'failed' } as const);
    await this.#store.recordLogoutAttempt(delivery.id, { attempt, at, error }, outcome);
    const fields = { delivery: delivery.id, client: delivery.clientId, attempt, status };
    if ('nextAttemptAt' in outcome)
      log.info({ ...fields, error, retryAt: outcome.nextAttemptAt }, 'logout token will be posted again');
    else if (outcome.status === 'failed') log.warn({ ...fields, error }, 'logout token given up');
  }
}
