// The verification page's domain (RFC 8628 §3.3): a signed-in person's typed user code, looked up
// under the throttle, and their answer. A lookup is an attempt at a code, counted before the code is
// looked up (src/authn/throttle.ts, the same rules as a password's): per source address (the sign-in
// address key, ten times the allowance), per person and per code typed, so that neither one address,
// nor one account, nor many addresses at one code guess for long (§5.1). A code found, pending and
// unexpired is a success; any other is a failure. Approving needs what an authorization request for
// the same client and scopes would: the admin role for the admin scope, two factors where the client
// or a scope asks for them (src/authn/policy.ts), stepping the session up first when it has one.
// Nothing is decided on a GET: the page's POST decides.
import { requirementFor } from '../../authn/policy.ts';
import type { Requirement } from '../../authn/requirement.ts';
import { type BrowserSession, signInClaims } from '../../authn/session.ts';
import { shortfall } from '../../authn/sufficiency.ts';
import { type Refusal, signInAddressKey, Throttle, type ThrottleCounter } from '../../authn/throttle.ts';
import type { Config } from '../../config/index.ts';
import { type Requester, securityEvent } from '../../events/index.ts';
import type { Client, ClientStore } from '../../store/clients.ts';
import type { DeviceAuthorization, DeviceAuthorizationStore } from '../../store/device-authorizations.ts';
import type { User } from '../../store/users.ts';
import { AccessDenied } from '../../errors/index.ts';
import { checkAdminUser } from '../scopes.ts';
import { normalizeUserCode, userCodeHash } from './user-code.ts';

export interface VerificationDeps {
  config: Pick<Config, 'throttle' | 'mfa'>;
  store: DeviceAuthorizationStore & ClientStore & ThrottleCounter;
}

/** A pending request found by its user code, its client, and the code in its canonical form. */
export interface PendingDevice {
  authorization: DeviceAuthorization;
  client: Client;
  userCode: string;
}

export type Lookup =
  { kind: 'found'; pending: PendingDevice } | { kind: 'unknown' } | { kind: 'refused'; refusal: Refusal };

/** The pending request a typed code names, counted as an attempt by `user` from `requester`. */
export async function lookUpUserCode(
  deps: VerificationDeps,
  input: { typed: string; user: User; requester: Requester; now: number },
): Promise<Lookup> {
  const { config, store } = deps;
  const { typed, user, now } = input;
  const code = normalizeUserCode(typed);
  const person = user.username.toLowerCase();
  const keys = [
    signInAddressKey(input.requester.ip, config.throttle),
    { key: `device-user:${person}`, subject: person, policy: config.throttle, onSuccess: 'clear' as const },
    // §5.1: many addresses at one code, against a code shown on a screen that someone saw part of.
    ...(code
      ? [
          {
            key: `user-code:${code}`,
            subject: `user-code:${code}`,
            policy: config.throttle,
            onSuccess: 'clear' as const,
          },
        ]
      : []),
  ];
  const attempt = await new Throttle(store).begin(keys, now);
  if (attempt.refused) return { kind: 'refused', refusal: attempt.refused };
  const pending = code ? await pendingRequest(store, code, now) : undefined;
  if (!pending) {
    await attempt.failed();
    return { kind: 'unknown' };
  }
  await attempt.succeeded();
  return { kind: 'found', pending };
}

async function pendingRequest(deps: VerificationDeps['store'], userCode: string, now: number) {
  const authorization = await deps.getDeviceAuthorizationByUserCode(userCodeHash(userCode));
  if (!authorization || authorization.status !== 'pending' || authorization.expiresAt <= now) return undefined;
  const client = await deps.getClient(authorization.clientId);
  return client && { authorization, client, userCode };
}

export type Decision =
  | 'approved'
  | 'denied'
  /** Decided meanwhile (another tab, another instance) or expired. */
  | 'gone'
  /** The admin scope for a person without the admin role (as ../scopes.ts checkAdminUser). */
  | 'not-admin'
  /**
   * The client or a scope needs more of the sign-in than this session has (two factors): the
   * session steps up to `need` first (src/authn/flow.ts), as at the authorization endpoint.
   */
  | { stepUp: Requirement };

/** The person's answer to a pending request, recorded with its event. */
export async function decideDevice(
  deps: VerificationDeps,
  input: {
    pending: PendingDevice;
    session: BrowserSession;
    user: User;
    allow: boolean;
    requester: Requester;
    now: number;
  },
): Promise<Decision> {
  const { pending, session, user, allow, requester, now } = input;
  const { authorization, client } = pending;
  const scopes = authorization.scope.split(' ').filter((s) => s !== '');
  const need = requirementFor(
    {
      prompts: [],
      maxAge: null,
      acrValues: [],
      scopes,
      clientRequiresMfa: client.requireMfa === true,
      mfaScopes: deps.config.mfa.scopes,
      mfa: deps.config.mfa.mode,
    },
    now,
  );
  if (allow) {
    try {
      checkAdminUser(scopes, user);
    } catch (err) {
      if (err instanceof AccessDenied) return 'not-admin';
      throw err;
    }
    if (shortfall(session, user, need)) return { stepUp: need };
  }
  const { authTime, amr, acr } = signInClaims(session.factors, need.acrValues);
  const status = allow ? 'approved' : 'denied';
  const event = securityEvent(allow ? 'device_authorization.approved' : 'device_authorization.denied', now, {
    userId: user.id,
    clientId: client.clientId,
    requester,
    data: { scopes },
  });
  const decision = {
    status,
    userId: user.id,
    authTime,
    amr: amr.length > 0 ? amr.join(' ') : null,
    acr,
    sid: session.sid ?? null,
  } as const;
  const decided = await deps.store.decideDeviceAuthorization(authorization.id, decision, now, event);
  return decided ? status : 'gone';
}
