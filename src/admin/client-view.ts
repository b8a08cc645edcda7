// A client as the operator sees it (`tessera clients show --json`, the admin API's Client): every
// setting, never a secret nor its hash.
import type { Config } from '../config/index.ts';
import { allowedOrigins } from '../oauth/origins.ts';
import { redirectUriProblem } from '../oauth/registration/redirect-rules.ts';
import type { Client } from '../store/clients.ts';
import { describeLifetimes } from './lifetimes.ts';

/** `text`: for a person to read (the CLI without --json), where a null says what it means. */
export function describeClient(client: Client, config: Config, text = false) {
  return {
    client_id: client.clientId,
    client_name: client.name,
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    scope: client.scopes.join(' '),
    grant_types: client.grantTypes,
    allowed_origins: client.allowedOrigins,
    cors_origins: allowedOrigins(client),
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    jwks_uri: client.jwksUri ?? null,
    jwks_kids: client.jwks ? client.jwks.keys.map((key) => String(key.kid ?? '(no kid)')) : [],
    first_party: client.firstParty,
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    require_mfa: client.requireMfa === true,
    require_pushed_authorization_requests: client.requirePushedAuthorizationRequests === true,
    dpop_bound_access_tokens: client.requireDpop === true,
    request_object_signing_alg: client.requestObjectSigningAlg ?? null,
    admin: client.admin === true,
    // The roles it may see in tokens; null: every role.
    roles: client.allowedRoles ?? (text ? '(every role)' : null),
    backchannel_logout_uri: client.backchannelLogout?.uri ?? null,
    backchannel_logout_session_required: client.backchannelLogout?.sessionRequired ?? false,
    frontchannel_logout_uri: client.frontchannelLogout?.uri ?? null,
    frontchannel_logout_session_required: client.frontchannelLogout?.sessionRequired ?? false,
    exchange_audiences: client.exchangeAudiences ?? [],
    ...describeLifetimes(client.lifetimes, config, text),
    created_at: new Date(client.createdAt * 1000).toISOString(),
    // Registered before today's rules: it keeps working, and is flagged here.
    redirect_uri_problems: [...client.redirectUris, ...client.postLogoutRedirectUris].flatMap((uri) => {
      const problem = redirectUriProblem(uri);
      return problem ? [`${uri} ${problem}`] : [];
    }),
    // Who vouches for it: the operator, or the client itself (RFC 7591), and the user it belongs to.
    registered_via: client.registeredVia,
    owner_id: client.ownerId,
  };
}
