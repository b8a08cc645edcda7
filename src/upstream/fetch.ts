// Requests to an upstream provider, through the outbound guard (../net/outbound.ts): no redirects, a
// cap on the body, https only (plain http only with TESSERA_OUTBOUND_ALLOW_PRIVATE, for development
// and tests), and no connection to a loopback, private or link-local address, except to the hosts the
// operator named for this provider when they allowed it (--allow-private-network: a company's
// identity provider inside its own network). The endpoints a discovery document names on other
// hosts get the full guard: the document is the provider's word, not the operator's.
//
// Every request of one step (the redirect's discovery; the callback's token, keys and userinfo)
// shares one deadline, so that a provider that does not answer gives the person a page in time.
import { AsyncLocalStorage } from 'node:async_hooks';
import { fetchOutbound, OutboundError, type OutboundResponse } from '../net/outbound.ts';
import type { UpstreamProvider } from '../store/upstream.ts';

/** The most of any answer of a provider (discovery documents and key sets are a few KB). */
const MAX_BYTES = 1024 * 1024;

/** Reports each request's duration and each failed step, for the metrics. */
export interface UpstreamObserver {
  requested(provider: string, seconds: number): void;
  failed(provider: string, reason: string): void;
}

export interface UpstreamNetwork {
  /** TESSERA_OUTBOUND_ALLOW_PRIVATE: every address and plain http (development and tests). */
  allowPrivate: boolean;
  /** TESSERA_UPSTREAM_TIMEOUT in milliseconds: a step's requests, in all. */
  timeoutMs: number;
  observer?: UpstreamObserver | undefined;
}

/** The step under way: whose requests these are and by when they must be answered. */
interface Step {
  provider: UpstreamProvider;
  network: UpstreamNetwork;
  /** performance.now() milliseconds. */
  deadline: number;
}

const current = new AsyncLocalStorage<Step>();

/**
 * Runs one step's requests (`work`) under a deadline: `deadline` (performance.now() milliseconds),
 * or network.timeoutMs from now.
 */
export function withinDeadline<T>(
  provider: UpstreamProvider,
  network: UpstreamNetwork,
  work: () => Promise<T>,
  deadline = performance.now() + network.timeoutMs,
): Promise<T> {
  return current.run({ provider, network, deadline }, work);
}

/** The hosts the operator named for the provider: its issuer's, or GitHub's web and API hosts. */
export function providerHosts(provider: UpstreamProvider): Set<string> {
  const urls = [provider.issuer, provider.githubUrl, provider.githubApiUrl].filter((u) => u !== null);
  return new Set(urls.map((url) => new URL(url).host));
}

/** One request of the current step (withinDeadline), through the guard. */
export async function upstreamRequest(
  url: string,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string },
): Promise<OutboundResponse> {
  const step = current.getStore();
  if (!step) throw new TypeError('upstreamRequest runs within withinDeadline');
  const { provider, network } = step;
  const left = Math.floor(step.deadline - performance.now());
  if (left <= 0) throw new OutboundError('timeout', `no answer from ${provider.id} within ${network.timeoutMs} ms`);
  const host = URL.parse(url)?.host;
  const ownHost = host !== undefined && provider.allowPrivateNetwork && providerHosts(provider).has(host);
  const started = performance.now();
  try {
    return await fetchOutbound(url, {
      ...init,
      timeoutMs: left,
      maxBytes: MAX_BYTES,
      allowPrivate: network.allowPrivate || ownHost,
      allowHttp: network.allowPrivate,
    });
  } finally {
    // Answered or not: a provider that times out shows in the latency too.
    network.observer?.requested(provider.id, (performance.now() - started) / 1000);
  }
}

/** Statuses whose answers have no body (the Fetch standard's null body statuses). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** upstreamRequest as the Fetch API openid-client calls (its customFetch). */
export async function upstreamFetch(
  url: string,
  options: { method: string; headers: Record<string, string>; body?: unknown },
): Promise<Response> {
  const body = options.body;
  const text =
    body === undefined || body === null
      ? undefined
      : typeof body === 'string' || body instanceof URLSearchParams
        ? body.toString()
        : body instanceof Uint8Array
          ? Buffer.from(body).toString('utf8')
          : undefined;
  if (body !== undefined && body !== null && text === undefined) throw new TypeError('unsupported request body');
  const method = options.method === 'POST' ? 'POST' : 'GET';
  const answer = await upstreamRequest(url, { method, headers: options.headers, ...(text ? { body: text } : {}) });
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return new Response(NULL_BODY.has(answer.status) ? null : answer.body, { status: answer.status, headers });
}
