// A client (./client.ts) and its row (./tables.ts) both ways: the JSON and space-separated lists,
// the flags, and the columns of later migrations written only when a client says them, so that a
// database from before a migration takes the others.
import type { Insertable, Selectable } from 'kysely';
import { type Client, type ClientJwks, SERVER_LIFETIMES } from './client.ts';
import { splitScope } from './columns.ts';
import type { ClientRow } from './tables.ts';

const seconds = (value: number | string | null) => (value === null ? null : Number(value));

export function toClient(row: Selectable<ClientRow>): Client {
  return {
    clientId: row.client_id,
    secretHash: row.secret_hash,
    name: row.name,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    postLogoutRedirectUris: JSON.parse(row.post_logout_redirect_uris) as string[],
    scopes: splitScope(row.scope),
    grantTypes: JSON.parse(row.grant_types) as string[],
    allowedOrigins: JSON.parse(row.allowed_origins) as string[],
    tokenEndpointAuthMethod: row.token_endpoint_auth_method,
    firstParty: row.first_party === 1,
    idTokenSignedResponseAlg: row.id_token_signed_response_alg,
    createdAt: row.created_at,
    registeredVia: row.registered_via === 'dynamic' ? 'dynamic' : 'operator',
    ownerId: row.owner_id,
    registrationTokenHash: row.registration_token_hash,
    metadata: JSON.parse(row.metadata) as Client['metadata'],
    previousSecret:
      row.previous_secret_hash === null
        ? null
        : { hash: row.previous_secret_hash, expiresAt: Number(row.previous_secret_expires_at) },
    lifetimes:
      row.access_token_ttl === null && row.refresh_token_ttl === null && row.id_token_ttl === null
        ? SERVER_LIFETIMES
        : {
            accessToken: seconds(row.access_token_ttl),
            refreshToken: seconds(row.refresh_token_ttl),
            idToken: seconds(row.id_token_ttl),
          },
    // Absent before migration 006 and for clients never given the option.
    ...(row.require_mfa === null || row.require_mfa === undefined ? {} : { requireMfa: row.require_mfa === 1 }),
    // Absent before migration 017 and for clients without them.
    ...(row.jwks ? { jwks: JSON.parse(row.jwks) as ClientJwks } : {}),
    ...(row.jwks_uri ? { jwksUri: row.jwks_uri } : {}),
    ...(row.secret_enc ? { secretEncrypted: row.secret_enc } : {}),
    ...(row.require_par === 1 ? { requirePushedAuthorizationRequests: true } : {}),
    ...(row.request_object_signing_alg ? { requestObjectSigningAlg: row.request_object_signing_alg } : {}),
    // Absent before migration 018.
    ...(row.admin === 1 ? { admin: true } : {}),
    ...(row.allowed_roles === null || row.allowed_roles === undefined
      ? {}
      : { allowedRoles: splitScope(row.allowed_roles) }),
    ...(row.backchannel_logout_uri == null
      ? {}
      : {
          backchannelLogout: {
            uri: row.backchannel_logout_uri,
            sessionRequired: Number(row.backchannel_logout_session_required) === 1,
          },
        }),
    // Absent before migration 027.
    ...(row.frontchannel_logout_uri == null
      ? {}
      : {
          frontchannelLogout: {
            uri: row.frontchannel_logout_uri,
            sessionRequired: Number(row.frontchannel_logout_session_required) === 1,
          },
        }),
    // Absent before migration 024 and for clients never given the option.
    ...(row.require_dpop === 1 ? { requireDpop: true } : {}),
    // Absent before migration 025 and for clients without them.
    ...(row.exchange_audiences ? { exchangeAudiences: splitScope(row.exchange_audiences) } : {}),
  };
}

/**
 * Migration 017's columns, written only for a client that says any of them (null: none), so that a
 * database before it takes the others.
 */
function keyColumns(client: Client): Partial<Insertable<ClientRow>> {
  const said = [
    client.jwks,
    client.jwksUri,
    client.secretEncrypted,
    client.requirePushedAuthorizationRequests,
    client.requestObjectSigningAlg,
  ];
  if (said.every((value) => value === undefined)) return {};
  return {
    jwks: client.jwks ? JSON.stringify(client.jwks) : null,
    jwks_uri: client.jwksUri ?? null,
    secret_enc: client.secretEncrypted ?? null,
    require_par: client.requirePushedAuthorizationRequests ? 1 : null,
    request_object_signing_alg: client.requestObjectSigningAlg ?? null,
  };
}

export function fromClient(client: Client): Insertable<ClientRow> {
  return {
    client_id: client.clientId,
    secret_hash: client.secretHash,
    name: client.name,
    redirect_uris: JSON.stringify(client.redirectUris),
    post_logout_redirect_uris: JSON.stringify(client.postLogoutRedirectUris),
    scope: client.scopes.join(' '),
    grant_types: JSON.stringify(client.grantTypes),
    allowed_origins: JSON.stringify(client.allowedOrigins),
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    first_party: client.firstParty ? 1 : 0,
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    created_at: client.createdAt,
    registered_via: client.registeredVia,
    owner_id: client.ownerId,
    registration_token_hash: client.registrationTokenHash,
    metadata: JSON.stringify(client.metadata),
    previous_secret_hash: client.previousSecret?.hash ?? null,
    previous_secret_expires_at: client.previousSecret?.expiresAt ?? null,
    access_token_ttl: client.lifetimes.accessToken,
    refresh_token_ttl: client.lifetimes.refreshToken,
    id_token_ttl: client.lifetimes.idToken,
    // Written only when said, so that a database before migration 006 takes the other columns.
    ...(client.requireMfa === undefined ? {} : { require_mfa: client.requireMfa ? 1 : 0 }),
    ...keyColumns(client),
    // Likewise before migration 018.
    ...(client.admin === undefined ? {} : { admin: client.admin ? 1 : 0 }),
    ...(client.allowedRoles === undefined ? {} : { allowed_roles: client.allowedRoles?.join(' ') ?? null }),
    // Written only when said (or removed), so that a database before migration 020 takes the others.
    ...(client.backchannelLogout === undefined
      ? {}
      : {
          backchannel_logout_uri: client.backchannelLogout?.uri ?? null,
          backchannel_logout_session_required: client.backchannelLogout?.sessionRequired ? 1 : 0,
        }),
    // Likewise before migration 027.
    ...(client.frontchannelLogout === undefined
      ? {}
      : {
          frontchannel_logout_uri: client.frontchannelLogout?.uri ?? null,
          frontchannel_logout_session_required: client.frontchannelLogout?.sessionRequired ? 1 : 0,
        }),
    // Likewise before migration 024.
    ...(client.requireDpop === undefined ? {} : { require_dpop: client.requireDpop ? 1 : 0 }),
    // Likewise before migration 025.
    ...(client.exchangeAudiences === undefined
      ? {}
      : { exchange_audiences: client.exchangeAudiences.length > 0 ? client.exchangeAudiences.join(' ') : null }),
  };
}
