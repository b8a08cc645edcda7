// The device authorization endpoint (RFC 8628 §3.1, §3.2): a client authenticates as at the token
// endpoint (a public client by its client_id), asks for scopes and perhaps a resource, checked as the
// authorization endpoint checks them, and gets a device code (for itself, to poll the token endpoint
// with), a user code (for the person, to type on the verification page), the page's address with and
// without the code, how long they live and how often it may poll. Both codes are stored hashed.
import type { Config } from '../../config/index.ts';
import { UnauthorizedClient } from '../../errors/index.ts';
import type { ClientStore } from '../../store/clients.ts';
import type { DeviceAuthorizationStore } from '../../store/device-authorizations.ts';
import type { ResourceStore } from '../../store/resources.ts';
import { hashToken, newSortableId, randomToken } from '../../tokens/opaque.ts';
import { scope as checkScope } from '../authorize/checks.ts';
import { authenticateClient } from '../client-auth/index.ts';
import { DEVICE_CODE_GRANT } from '../grant-types.ts';
import type { ClientAuthGuard } from '../client-auth/throttle.ts';
import { type Params, rejectDuplicates } from '../params.ts';
import { checkScopesForResource, knownResource, resourceParam } from '../resources.ts';
import { formatUserCode, newUserCode, userCodeHash, VERIFICATION_PATH } from './user-code.ts';

/** Seconds a device authorization lives (RFC 8628 §3.2 expires_in): node-oidc-provider's ten minutes. */
export const DEVICE_CODE_TTL = 600;
/** Seconds between polls (§3.2 interval; §3.5: the default 5), grown by 5 with each slow_down. */
export const POLL_INTERVAL = 5;
/** Draws of a user code before giving up: a draw is taken only when a live code has its hash. */
const DRAWS = 5;

/** RFC 8628 §3.2. */
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

export interface DeviceAuthorizationDeps {
  config: Pick<Config, 'issuer' | 'scopes'>;
  store: ClientStore & ResourceStore & DeviceAuthorizationStore;
}

export async function authorizeDevice(
  deps: DeviceAuthorizationDeps,
  authorization: string | undefined,
  body: Params,
  now: number,
  guard?: ClientAuthGuard,
): Promise<DeviceAuthorizationResponse> {
  // Before the duplicates: a repeated resource is invalid_target (RFC 8707 §2).
  const resource = resourceParam(body) ?? null;
  rejectDuplicates(body);
  const client = await authenticateClient(deps.store, authorization, body, guard);
  // §3.1: only a client allowed the grant starts one (RFC 6749 §5.2 unauthorized_client).
  if (!client.grantTypes.includes(DEVICE_CODE_GRANT)) {
    throw new UnauthorizedClient('the client is not allowed to use the device authorization grant');
  }
  // §3.1: scope as at the authorization endpoint (RFC 6749 §3.3): known, the client's, admin only its own.
  const scopes = checkScope(body, client, deps.config.scopes);
  if (resource !== null) checkScopesForResource(scopes, await knownResource(deps.store, resource));
  const deviceCode = randomToken();
  const pending = {
    // The grant's id once approved: sorted by time, as every grant's (docs/endpoints.md).
    id: newSortableId(),
    deviceCodeHash: hashToken(deviceCode),
    clientId: client.clientId,
    scope: scopes.join(' '),
    resource,
    status: 'pending',
    decision: null,
    interval: POLL_INTERVAL,
    lastPolledAt: null,
    expiresAt: now + DEVICE_CODE_TTL,
    createdAt: now,
  } as const;
  for (let draw = 0; draw < DRAWS; draw++) {
    const userCode = newUserCode();
    if (await deps.store.createDeviceAuthorization({ ...pending, userCodeHash: userCodeHash(userCode) })) {
      const verificationUri = `${deps.config.issuer}${VERIFICATION_PATH}`;
      const shown = formatUserCode(userCode);
      return {
        device_code: deviceCode,
        user_code: shown,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${shown}`,
        expires_in: DEVICE_CODE_TTL,
        interval: POLL_INTERVAL,
      };
    }
  }
  throw new Error('no free user code after several draws');
}
