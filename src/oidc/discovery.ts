// OIDC Discovery 1.0 §3 and RFC 8414 §2: the same metadata at both well-known addresses.
import { LOCALES } from '../i18n/locales.ts';
import { ACR_VALUES } from '../authn/levels.ts';
import type { Config } from '../config/index.ts';
import { SUPPORTED_GRANT_TYPES } from '../oauth/token.ts';
import { SIGNING_ALGS } from '../tokens/keystore.ts';
import { CLIENT_SECRET_JWT_ALGS, PRIVATE_KEY_JWT_ALGS } from '../oauth/client-auth/assertion.ts';
import { REQUEST_OBJECT_ALGS } from '../oauth/authorize/request-object.ts';
import { SUPPORTED_CLAIMS } from '../tokens/claims.ts';
import { DPOP_ALGS } from '../tokens/dpop-proof.ts';
import { TOKEN_TYPES } from '../oauth/grants/subject-token.ts';

/** How confidential clients authenticate (src/oauth/client-auth), and the algs of their assertions. */
const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'client_secret_jwt', 'private_key_jwt'];
const ASSERTION_ALGS = [...PRIVATE_KEY_JWT_ALGS, ...CLIENT_SECRET_JWT_ALGS];

export function discoveryMetadata(
  config: Pick<
    Config,
    'issuer' | 'scopes' | 'registration' | 'clientMetadataDocuments' | 'requirePushedAuthorizationRequests'
  >,
): Record<string, unknown> {
  const base = config.issuer;
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth2/authorize`,
    token_endpoint: `${base}/oauth2/token`,
    userinfo_endpoint: `${base}/oauth2/userinfo`,
    jwks_uri: `${base}/oauth2/jwks`,
    revocation_endpoint: `${base}/oauth2/revoke`,
    introspection_endpoint: `${base}/oauth2/introspect`,
    end_session_endpoint: `${base}/oauth2/logout`,
    // RFC 9126 §5.
    pushed_authorization_request_endpoint: `${base}/oauth2/par`,
    // RFC 8628 §4.
    device_authorization_endpoint: `${base}/oauth2/device_authorization`,
    require_pushed_authorization_requests: config.requirePushedAuthorizationRequests,
    // Back-Channel Logout 1.0 §2.1: logout tokens to the clients registered for them, with `sid`.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    // Front-Channel Logout 1.0 §3: the end of a session loads each such client's page, with `iss` and `sid`.
    frontchannel_logout_supported: true,
    frontchannel_logout_session_supported: true,
    ...(config.registration.mode !== 'off' ? { registration_endpoint: `${base}/oauth2/register` } : {}),
    // RFC 8414 §2: admin is not offered to clients at large (src/oauth/scopes.ts), so not advertised.
    scopes_supported: [...config.scopes.keys()].filter((s) => s !== 'admin'),
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: SUPPORTED_GRANT_TYPES,
    // draft-ietf-oauth-identity-assertion-authz-grant: ID-JAGs redeemed with the jwt-bearer grant.
    authorization_grant_profiles_supported: ['urn:ietf:params:oauth:grant-profile:id-jag'],
    // The same draft, as the identity provider: ID-JAGs minted by token exchange under a connection.
    identity_chaining_requested_token_types_supported: [TOKEN_TYPES.idJag],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: SIGNING_ALGS,
    userinfo_signing_alg_values_supported: [],
    token_endpoint_auth_methods_supported: [...AUTH_METHODS, 'none'],
    token_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    revocation_endpoint_auth_methods_supported: [...AUTH_METHODS, 'none'],
    revocation_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    introspection_endpoint_auth_methods_supported: AUTH_METHODS,
    introspection_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    code_challenge_methods_supported: ['S256'],
    // RFC 9449 §5.1: the algs of DPoP proofs at the token endpoint and userinfo.
    dpop_signing_alg_values_supported: DPOP_ALGS,
    claims_supported: SUPPORTED_CLAIMS,
    // OIDC Discovery §3: the levels acr_values may ask for, lowest first (src/authn/factors.ts).
    acr_values_supported: [...ACR_VALUES],
    claims_parameter_supported: true,
    // OIDC Core §3.1.2.1 display: accepted, and every page is the same whatever it asks.
    display_values_supported: ['page', 'popup', 'touch', 'wap'],
    // OIDC Discovery §3: the languages of the pages, which ui_locales chooses among (src/i18n).
    ui_locales_supported: [...LOCALES],
    // RFC 9101, OIDC Core §6.1: request objects by value; by reference only as a pushed request's.
    request_parameter_supported: true,
    request_object_signing_alg_values_supported: REQUEST_OBJECT_ALGS,
    request_uri_parameter_supported: false,
    prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: config.clientMetadataDocuments,
  };
}
