// Client metadata (RFC 7591 §2) as a client states it about itself, in a registration request or in
// its Client ID Metadata Document: checked field by field, with the RFC's defaults. Errors are
// `invalid_redirect_uri` or `invalid_client_metadata` (§3.2.2) with a fixed description that names
// the field, never the value sent. Fields Tessera does not know are ignored (§2).
import { InvalidClientMetadata, InvalidRedirectUri } from '../../errors/index.ts';
import type {
  ClientDescription,
  ClientJwks,
  LogoutChannel,
  LogoutUri,
  TokenEndpointAuthMethod,
} from '../../store/clients.ts';
import { jwksProblem } from '../client-auth/keys.ts';
import { REQUEST_OBJECT_ALGS } from '../authorize/request-object.ts';
import { ADMIN_SCOPE, SCOPE_TOKEN } from '../scopes.ts';
import { DEVICE_CODE_GRANT, PERSON_GRANT_TYPES } from '../grant-types.ts';
import { logoutUriProblem, normalizeRedirectUri, redirectUriProblem, webUriProblem } from './redirect-rules.ts';

export interface ClientMetadata {
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  grantTypes: string[];
  responseTypes: string[];
  /** client_name, or null when none was given. */
  name: string | null;
  scopes: string[];
  idTokenSignedResponseAlg: 'RS256' | 'ES256' | null;
  /** Back-Channel Logout 1.0 §2.2: backchannel_logout_uri and backchannel_logout_session_required; null: none. */
  backchannelLogout: LogoutUri | null;
  /** Front-Channel Logout 1.0 §2: frontchannel_logout_uri and frontchannel_logout_session_required; null: none. */
  frontchannelLogout: LogoutUri | null;
  description: ClientDescription;
  /** Its public keys (RFC 7591 §2 jwks or jwks_uri, one at most); null for none. */
  jwks: ClientJwks | null;
  jwksUri: string | null;
  /** RFC 9126 §6: its authorization requests must be pushed. */
  requirePushedAuthorizationRequests: boolean;
  /** RFC 9449 §5.2 dpop_bound_access_tokens: every token request carries a DPoP proof. */
  requireDpop: boolean;
  /** RFC 9101 §10.5: the alg of its request objects; null for any asymmetric one. */
  requestObjectSigningAlg: string | null;
}

export interface MetadataPolicy {
  /** The scopes a client registering itself may have; also its scopes when it names none. */
  scopes: readonly string[];
  /** The grant types it may have (TESSERA_REGISTRATION_GRANT_TYPES, or what an update may keep). */
  grantTypes: readonly string[];
  /** A Client ID Metadata Document: a public client (auth method none), with no secret. */
  document?: boolean;
}

const GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials', DEVICE_CODE_GRANT];
// client_secret_jwt needs the server to hold the secret encrypted: for clients the operator registers.
const AUTH_METHODS: readonly TokenEndpointAuthMethod[] = [
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
  'none',
];
const MAX_NAME = 100;
const MAX_CONTACTS = 10;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

type Json = Record<string, unknown>;

function optionalString(body: Json, field: string, max = 2000): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length > max) {
    throw new InvalidClientMetadata(`${field} must be a string of at most ${max} characters`);
  }
  return value;
}

function stringArray(body: Json, field: string, max = 20): string[] | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length > max || !value.every((v) => typeof v === 'string')) {
    throw new InvalidClientMetadata(`${field} must be an array of at most ${max} strings`);
  }
  return [...new Set(value as string[])];
}

function redirectUris(body: Json, field: string): string[] {
  const uris = stringArray(body, field) ?? [];
  uris.forEach((uri, i) => {
    const problem = redirectUriProblem(uri);
    if (problem) throw new InvalidRedirectUri(`${field}[${i}] ${problem}`);
  });
  return [...new Set(uris.map(normalizeRedirectUri))];
}

function webUri(body: Json, field: string): string | undefined {
  const uri = optionalString(body, field);
  const problem = uri === undefined ? undefined : webUriProblem(uri);
  if (problem) throw new InvalidClientMetadata(`${field} ${problem}`);
  return uri;
}

/** Checks a client's metadata; throws invalid_redirect_uri or invalid_client_metadata. */
/**
 * `CHANNEL_logout_uri` and `CHANNEL_logout_session_required` (Back-Channel Logout 1.0 §2.2,
 * Front-Channel Logout 1.0 §2): the URI, and whether it needs the `sid` (false when left out).
 */
function logoutOf(body: Json, channel: LogoutChannel): LogoutUri | null {
  const uri = optionalString(body, `${channel}_logout_uri`);
  const problem = uri === undefined ? undefined : logoutUriProblem(uri);
  if (problem) throw new InvalidClientMetadata(`${channel}_logout_uri ${problem}`);
  const sessionRequired = body[`${channel}_logout_session_required`] ?? false;
  if (typeof sessionRequired !== 'boolean') {
    throw new InvalidClientMetadata(`${channel}_logout_session_required must be a boolean`);
  }
  return uri === undefined ? null : { uri, sessionRequired };
}

export function checkClientMetadata(body: unknown, policy: MetadataPolicy): ClientMetadata {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidClientMetadata('the client metadata must be a JSON object');
  }
  const json = body as Json;

  // §2: token_endpoint_auth_method defaults to client_secret_basic; a document's client has no secret.
  const method = optionalString(json, 'token_endpoint_auth_method', 100) ?? (policy.document ? 'none' : undefined);
  const authMethod = (method ?? 'client_secret_basic') as TokenEndpointAuthMethod;
  if (!AUTH_METHODS.includes(authMethod)) {
    throw new InvalidClientMetadata(`token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`);
  }
  if (policy.document && authMethod !== 'none') {
    throw new InvalidClientMetadata('token_endpoint_auth_method must be none in a client ID metadata document');
  }
  if (policy.document && (json.client_secret !== undefined || json.client_secret_expires_at !== undefined)) {
    throw new InvalidClientMetadata('a client ID metadata document must not carry a client secret');
  }

  // §2.1: grant_types defaults to authorization_code; response_types to code, and they must agree.
  const grantTypes = stringArray(json, 'grant_types', 5) ?? ['authorization_code'];
  if (grantTypes.length === 0 || grantTypes.some((g) => !GRANT_TYPES.includes(g))) {
    throw new InvalidClientMetadata(`grant_types must be drawn from ${GRANT_TYPES.join(', ')}`);
  }
  // RFC 7591 §2: the server may refuse grant types by its policy; what registers itself gets the least.
  if (grantTypes.some((g) => !policy.grantTypes.includes(g))) {
    throw new InvalidClientMetadata(`grant_types must be drawn from ${policy.grantTypes.join(', ')} here`);
  }
  const code = grantTypes.includes('authorization_code');
  const responseTypes = stringArray(json, 'response_types', 5) ?? (code ? ['code'] : []);
  if (responseTypes.some((r) => r !== 'code')) throw new InvalidClientMetadata('response_types may only be code');
  if (code !== responseTypes.includes('code')) {
    throw new InvalidClientMetadata('response_types code and grant_types authorization_code go together');
  }
  if (grantTypes.includes('refresh_token') && !grantTypes.some((g) => PERSON_GRANT_TYPES.includes(g))) {
    throw new InvalidClientMetadata(`grant_types refresh_token needs ${PERSON_GRANT_TYPES.join(' or ')}`);
  }
  if (grantTypes.includes('client_credentials') && authMethod === 'none') {
    throw new InvalidClientMetadata('a public client (token_endpoint_auth_method none) cannot use client_credentials');
  }

  const uris = redirectUris(json, 'redirect_uris');
  if (code && uris.length === 0) throw new InvalidRedirectUri('redirect_uris is required for authorization_code');
  const postLogout = redirectUris(json, 'post_logout_redirect_uris');

  const scope = optionalString(json, 'scope', 1000);
  const scopes = scope === undefined ? [...policy.scopes] : [...new Set(scope.split(' ').filter((s) => s !== ''))];
  if (scopes.some((s) => !SCOPE_TOKEN.test(s))) throw new InvalidClientMetadata('scope is not a list of scope tokens');
  // Only the operator's mark gives the admin scope (../scopes.ts), whatever TESSERA_REGISTRATION_SCOPES says.
  if (scopes.includes(ADMIN_SCOPE))
    throw new InvalidClientMetadata('the admin scope is never granted through registration');
  if (scopes.length === 0 || scopes.some((s) => !policy.scopes.includes(s))) {
    throw new InvalidClientMetadata(`scope must be drawn from ${policy.scopes.join(' ')}`);
  }

  const name = optionalString(json, 'client_name', MAX_NAME)?.trim();
  if (name !== undefined && CONTROL.test(name)) throw new InvalidClientMetadata('client_name has control characters');

  const contacts = stringArray(json, 'contacts', MAX_CONTACTS);
  if (contacts?.some((c) => c.length > 254 || !EMAIL.test(c))) {
    throw new InvalidClientMetadata('contacts must be email addresses');
  }
  const alg = optionalString(json, 'id_token_signed_response_alg', 10);
  if (alg !== undefined && alg !== 'RS256' && alg !== 'ES256') {
    throw new InvalidClientMetadata('id_token_signed_response_alg must be RS256 or ES256');
  }

  // §2: jwks and jwks_uri MUST NOT both be present; private_key_jwt needs one of them.
  const jwksUri = webUri(json, 'jwks_uri') ?? null;
  const jwks = json.jwks === undefined || json.jwks === null ? null : json.jwks;
  if (jwks !== null && jwksUri !== null) throw new InvalidClientMetadata('jwks and jwks_uri must not both be given');
  const problem = jwks === null ? undefined : jwksProblem(jwks);
  if (problem) throw new InvalidClientMetadata(`jwks ${problem}`);
  if (authMethod === 'private_key_jwt' && jwks === null && jwksUri === null) {
    throw new InvalidClientMetadata('token_endpoint_auth_method private_key_jwt needs jwks or jwks_uri');
  }

  const requirePar = json.require_pushed_authorization_requests ?? false;
  if (typeof requirePar !== 'boolean') {
    throw new InvalidClientMetadata('require_pushed_authorization_requests must be true or false');
  }

  const requireDpop = json.dpop_bound_access_tokens ?? false;
  if (typeof requireDpop !== 'boolean')
    throw new InvalidClientMetadata('dpop_bound_access_tokens must be true or false');

  const requestAlg = optionalString(json, 'request_object_signing_alg', 10) ?? null;
  if (requestAlg !== null && !REQUEST_OBJECT_ALGS.includes(requestAlg)) {
    throw new InvalidClientMetadata(`request_object_signing_alg must be one of ${REQUEST_OBJECT_ALGS.join(', ')}`);
  }

  const description: ClientDescription = {};
  for (const field of ['client_uri', 'logo_uri', 'tos_uri', 'policy_uri'] as const) {
    const uri = webUri(json, field);
    if (uri !== undefined) description[field] = uri;
  }
  if (contacts && contacts.length > 0) description.contacts = contacts;
  for (const field of ['software_id', 'software_version'] as const) {
    const value = optionalString(json, field, 200);
    if (value !== undefined) description[field] = value;
  }
  return {
    redirectUris: uris,
    postLogoutRedirectUris: postLogout,
    tokenEndpointAuthMethod: authMethod,
    grantTypes: [...new Set(grantTypes)],
    responseTypes: [...new Set(responseTypes)],
    name: name === undefined || name === '' ? null : name,
    scopes,
    idTokenSignedResponseAlg: alg ?? null,
    backchannelLogout: logoutOf(json, 'backchannel'),
    frontchannelLogout: logoutOf(json, 'frontchannel'),
    description,
    jwks: jwks as ClientJwks | null,
    jwksUri,
    requirePushedAuthorizationRequests: requirePar,
    requireDpop,
    requestObjectSigningAlg: requestAlg,
  };
}
