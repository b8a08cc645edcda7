// Rows of the protocol's short-lived state: assertions' jtis used once, pushed authorization requests,
// device authorizations and access tokens revoked; the conventions of ./tables.ts.

/** A `jti` used once (a client assertion's), hashed with what it is for; kept until it expires. */
export interface UsedJtiRow {
  id: string;
  expires_at: number;
}

/** A pushed authorization request (RFC 9126), under the hash of its request_uri, until used or expired. */
export interface PushedRequestRow {
  id: string;
  client_id: string;
  /** JSON object of the request's parameters. */
  params: string;
  expires_at: number;
}

/** A device authorization request (RFC 8628, migration 023), under the hashes of its device and user codes. */
export interface DeviceAuthorizationRow {
  id: string;
  device_code_hash: string;
  user_code_hash: string;
  client_id: string;
  scope: string;
  resource: string | null;
  /** 'pending', 'approved' or 'denied'. */
  status: string;
  user_id: string | null;
  auth_time: number | null;
  amr: string | null;
  acr: string | null;
  sid: string | null;
  poll_interval: number;
  last_polled_at: number | null;
  expires_at: number;
  created_at: number;
  decided_at: number | null;
}

/** An access token (JWT) revoked before its expiry, kept until it would have expired (RFC 7009). */
export interface RevokedAccessTokenRow {
  jti: string;
  expires_at: number;
}
