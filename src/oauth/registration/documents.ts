// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): a client_id that is an
// https URL with a path names a JSON document of the client's metadata, which the client serves
// itself. Tessera fetches it (guarded: https only, no private addresses, a timeout, a size limit, no
// redirects: ../../net/outbound.ts), checks it as it checks a registration (./metadata.ts) plus the
// draft's rules (its client_id is the URL, a public client with no secret), and uses it as a public
// client that is never stored. Documents are cached as their Cache-Control allows, within bounds,
// and refusals briefly, so that neither a busy client nor a failing one makes Tessera fetch again
// and again; fetches are limited per host and in total (./fetch-limits.ts). Every fetch that fails,
// whatever the reason (a closed port, a timeout, a private address, a status, not JSON, a limit),
// answers one fixed text, so that the error tells nothing of what lies at the URL; the reason goes
// to the operator's log. Its name is the document's claim alone: the consent page leads with the
// URL's host.
import { OAuthError } from '../../errors/index.ts';
import { fetchOutbound, OutboundError } from '../../net/outbound.ts';
import { type Client, SERVER_LIFETIMES } from '../../store/clients.ts';
import { FetchLimits } from './fetch-limits.ts';
import { checkClientMetadata } from './metadata.ts';

/** A client_id that names a metadata document: an https URL with a path (not just /). */
export function isClientIdUrl(clientId: string): boolean {
  return clientId.startsWith('https://') && (URL.parse(clientId)?.pathname ?? '/') !== '/';
}

/** A metadata document that cannot be used: to the client, invalid_client (401). */
export class ClientDocumentError extends OAuthError {
  constructor(description: string, detail?: string) {
    super('invalid_client', description, 401, detail);
  }
}

/** What every failed fetch says, whatever failed. */
export const DOCUMENT_FETCH_FAILED = "the client's metadata document could not be fetched";

/** Where the reasons of failed fetches go: the operator's log. */
export type DocumentLog = (fields: { clientId: string; reason: string }, message: string) => void;

export interface DocumentPolicy {
  /** The scopes a client may have (TESSERA_REGISTRATION_SCOPES), and its scopes when it names none. */
  scopes: readonly string[];
  /** The grant types it may have (TESSERA_REGISTRATION_GRANT_TYPES). */
  grantTypes: readonly string[];
  /** TESSERA_OUTBOUND_ALLOW_PRIVATE: development and tests only. */
  allowPrivate: boolean;
  log?: DocumentLog;
  limits?: FetchLimits;
}

/** Bounds on how long a document is kept, seconds, whatever its Cache-Control says; and the default. */
export const DOCUMENT_CACHE = { min: 30, max: 86_400, default: 300, failure: 30 } as const;
const MAX_BYTES = 5 * 1024;
const TIMEOUT_MS = 5_000;
const MAX_ENTRIES = 1_000;

/** The draft's §3 rules for the URL itself; the problem, or undefined. */
function clientIdProblem(clientId: string): string | undefined {
  const url = URL.parse(clientId);
  if (!url || url.protocol !== 'https:' || url.pathname === '/') return 'must be an https URL with a path';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  if (clientId.includes('#')) return 'must not contain a fragment';
  // Dot segments are gone from the parsed URL: the id must be written as it will be compared.
  if (url.href !== clientId || /\/\.\.?(\/|$|\?)/.test(clientId)) return 'must be a normalized URL';
  return undefined;
}

/** Seconds to keep a document its Cache-Control allows, within DOCUMENT_CACHE's bounds. */
export function cacheSeconds(cacheControl: string | string[] | undefined): number {
  const value = (Array.isArray(cacheControl) ? cacheControl.join(',') : (cacheControl ?? '')).toLowerCase();
  if (/(^|[,\s])(no-store|no-cache)\b/.test(value)) return DOCUMENT_CACHE.min;
  const maxAge = /(^|[,\s])max-age=(\d+)/.exec(value);
  const seconds = maxAge ? Number(maxAge[2]) : DOCUMENT_CACHE.default;
  return Math.min(DOCUMENT_CACHE.max, Math.max(DOCUMENT_CACHE.min, seconds));
}

type Entry = { client: Client; until: number } | { problem: ClientDocumentError; until: number };

/** A fetch a limit did not let happen: failed like any other, and not remembered. */
class FetchRefused extends Error {}

export class ClientDocuments {
  readonly #policy: DocumentPolicy;
  readonly #cache = new Map<string, Entry>();
  readonly #fetching = new Map<string, Promise<Entry>>();
  readonly #now: () => number;
  readonly #limits: FetchLimits;

  constructor(policy: DocumentPolicy, now: () => number = () => Date.now() / 1000) {
    this.#policy = policy;
    this.#now = now;
    this.#limits = policy.limits ?? new FetchLimits();
  }

  /** The client the document at `clientId` describes; ClientDocumentError saying why not. */
  async get(clientId: string): Promise<Client> {
    const now = this.#now();
    let entry = this.#cache.get(clientId);
    if (!entry || entry.until <= now) {
      let fetching = this.#fetching.get(clientId);
      if (!fetching) {
        fetching = this.#load(clientId).finally(() => this.#fetching.delete(clientId));
        this.#fetching.set(clientId, fetching);
      }
      entry = await fetching;
    }
    if ('problem' in entry) throw entry.problem;
    return entry.client;
  }

  async #load(clientId: string): Promise<Entry> {
    let entry: Entry;
    try {
      const { client, seconds } = await this.#fetch(clientId);
      entry = { client, until: this.#now() + seconds };
    } catch (err) {
      if (err instanceof FetchRefused) return { problem: this.#failed(clientId, err.message), until: 0 };
      if (!(err instanceof ClientDocumentError)) throw err;
      entry = { problem: err, until: this.#now() + DOCUMENT_CACHE.failure };
    }
    if (this.#cache.size >= MAX_ENTRIES) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.delete(clientId);
    this.#cache.set(clientId, entry);
    return entry;
  }

  /** The one answer of a failed fetch; the reason to the log. */
  #failed(clientId: string, reason: string): ClientDocumentError {
    this.#policy.log?.({ clientId, reason }, 'client metadata document not fetched');
    return new ClientDocumentError(DOCUMENT_FETCH_FAILED, reason);
  }

  async #fetch(clientId: string): Promise<{ client: Client; seconds: number }> {
    const problem = clientIdProblem(clientId);
    if (problem) throw new ClientDocumentError(`a client_id URL ${problem}`);
    const host = new URL(clientId).host;
    const limit = this.#limits.begin(host, Date.now());
    if ('refused' in limit) throw new FetchRefused(limit.refused);
    let response;
    try {
      response = await fetchOutbound(clientId, {
        headers: { accept: 'application/json' },
        timeoutMs: TIMEOUT_MS,
        maxBytes: MAX_BYTES,
        allowPrivate: this.#policy.allowPrivate,
      });
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      throw this.#failed(clientId, `${err.reason}: ${err.message}`);
    } finally {
      limit.end();
    }
    if (response.status !== 200) throw this.#failed(clientId, `HTTP ${response.status}`);
    let document: unknown;
    try {
      document = JSON.parse(response.body.toString('utf8'));
    } catch {
      throw this.#failed(clientId, 'the body is not JSON');
    }
    if (typeof document !== 'object' || document === null || Array.isArray(document)) {
      throw this.#failed(clientId, 'the body is not a JSON object');
    }
    if ((document as { client_id?: unknown }).client_id !== clientId) {
      throw new ClientDocumentError("the client's metadata document names another client_id");
    }
    let metadata;
    try {
      const { scopes, grantTypes } = this.#policy;
      metadata = checkClientMetadata(document, { scopes, grantTypes, document: true });
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      throw new ClientDocumentError(`the client's metadata document is not valid: ${err.message}`);
    }
    const client: Client = {
      clientId,
      secretHash: null,
      name: metadata.name ?? host,
      redirectUris: metadata.redirectUris,
      postLogoutRedirectUris: metadata.postLogoutRedirectUris,
      scopes: metadata.scopes,
      grantTypes: metadata.grantTypes,
      allowedOrigins: [],
      tokenEndpointAuthMethod: 'none',
      firstParty: false,
      idTokenSignedResponseAlg: metadata.idTokenSignedResponseAlg,
      createdAt: Math.floor(this.#now()),
      registeredVia: 'document',
      ownerId: null,
      registrationTokenHash: null,
      metadata: metadata.description,
      previousSecret: null,
      lifetimes: SERVER_LIFETIMES,
    };
    return { client, seconds: cacheSeconds(response.headers['cache-control']) };
  }
}
