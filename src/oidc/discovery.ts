// OIDC Discovery 1.0 §3 and RFC 8414 §2: the same metadata at both well-known addresses.
import { LOCALES } from '../i18n/locales.ts';
import { ACR_VALUES } from '../authn/levels.ts';
import type { Config } from '../config/index.ts';
import { SUPPORTED_GRANT_TYPES } from '../oauth/token.ts';
import { SIGNING_ALGS } from '../tokens/keystore.ts';
import { SUPPORTED_CLAIMS } from '../tokens/claims.ts';

export function discoveryMetadata(
  config: Pick<Config, 'issuer' | 'scopes' | 'registration' | 'clientMetadataDocuments'>,
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
    // Back-Channel Logout 1.0 §2.1: logout tokens to the clients registered for them, with `sid`.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    ...(config.registration.mode !== 'off' ? { registration_endpoint: `${base}/oauth2/register` } : {}),
    scopes_supported: [...config.scopes.keys()],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: SUPPORTED_GRANT_TYPES,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: SIGNING_ALGS,
    userinfo_signing_alg_values_supported: [],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    claims_supported: SUPPORTED_CLAIMS,
    // OIDC Discovery §3: the levels acr_values may ask for, lowest first (src/authn/factors.ts).
    acr_values_supported: [...ACR_VALUES],
    claims_parameter_supported: false,
    // OIDC Discovery §3: the languages of the pages, which ui_locales chooses among (src/i18n).
    ui_locales_supported: [...LOCALES],
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: config.clientMetadataDocuments,
  };
}
