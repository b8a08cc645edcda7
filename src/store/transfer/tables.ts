// What `tessera export` writes and `tessera import` reads: one entry per table, in the order they are
// written. A row is carried as the table holds it (its columns, found in the database itself), so a
// column a later migration adds travels with no change here; a new table that holds what defines a
// deployment adds one entry (and a row in test/store/transfer.test.ts's data), and one that holds
// passing state names the reason in NOT_EXPORTED. Encrypted columns stay encrypted under
// TESSERA_SECRET (../encrypted.ts lists them; the import checks they open).
import type { Database } from '../tables.ts';

export type Include = 'keys' | 'events';

export interface ExportedTable {
  table: keyof Database;
  /** The primary key: rows are written in its order. */
  key: readonly string[];
  /** Written only when asked for: `--include-keys`, `--include-events`. */
  only?: Include;
}

function exported<T extends keyof Database>(
  table: T,
  key: ReadonlyArray<keyof Database[T] & string>,
  only?: Include,
): ExportedTable {
  return { table, key, ...(only ? { only } : {}) };
}

export const EXPORTED_TABLES: readonly ExportedTable[] = [
  // Every `sub` and its password hash (argon2id), so users sign in as before.
  exported('users', ['id']),
  // Every client_id with its secret's hash (and the previous one during a rotation's grace).
  exported('clients', ['client_id']),
  exported('resources', ['uri']),
  exported('consents', ['user_id', 'client_id']),
  // The signing secret stays encrypted under TESSERA_SECRET, as stored.
  exported('webhooks', ['id']),
  // Public keys and counters: users sign in with their passkeys as before (the issuer's host, the
  // relying party's ID, must stay the same).
  exported('passkeys', ['id']),
  // Authenticator apps (their secrets encrypted under TESSERA_SECRET, as stored, with the last time
  // step used, so that no code works twice across the move) and recovery codes (hashed).
  exported('totp_credentials', ['user_id']),
  exported('recovery_codes', ['user_id', 'hash']),
  // Upstream providers (their client secrets encrypted under TESSERA_SECRET, as stored) and who is
  // linked to whom: people sign in through them as before (the issuer, in their callback URIs, must
  // stay the same).
  exported('upstream_providers', ['id']),
  exported('upstream_links', ['provider_id', 'subject']),
  // The operator's policies for minting ID-JAGs (src/admin/connections.ts).
  exported('connections', ['id']),
  // Private halves encrypted under TESSERA_SECRET, as stored: so that tokens signed before the move
  // still verify. Without them, the first start makes new keys.
  exported('signing_keys', ['kid'], 'keys'),
  // The audit trail, which can be large.
  exported('events', ['id'], 'events'),
];

/** The tables left out, and why: each is either exported or here (a test checks every table is). */
export const NOT_EXPORTED: Readonly<Record<string, string>> = {
  grants: 'refresh-token families are passing state: apps get new tokens after an import',
  sessions: 'browser sessions: users sign in again after an import',
  revoked_access_tokens: 'kept only until the access tokens expire, and no access token survives a move',
  throttles: 'counts of recent failures, which start again',
  webhook_deliveries: "the outbox's passing state: deliveries not yet made are not made from the new database",
  webhook_attempts: 'the log of deliveries made',
  logout_deliveries:
    "the back-channel logout outbox's passing state: a logout token not yet posted is not posted " +
    'from the new database (the sessions it speaks of are not moved either)',
  restore_fences: "a property of one database's history (../restores.ts)",
  restore_watch: "one database's identity and activity mark (../restore-watch.ts): the new database makes its own",
  webauthn_challenges: 'the passkey challenges answered, kept only until they would have expired',
  mails:
    "the mail outbox's passing state: mails not yet sent are not sent from the new database (their links would fail)",
  mail_tokens:
    'short-lived single-use links: a reset or confirmation is asked for again, an invitation resent (--resend)',
  used_jtis: 'the client assertions used, kept only until they expire',
  pushed_requests: 'pushed authorization requests, each used within a minute',
  device_authorizations: 'device authorizations (RFC 8628), each decided and polled within minutes',
  tessera_migrations: "the header names the migrations; the target's own are applied by the import",
  tessera_migrations_lock: "the migrator's lock",
};
