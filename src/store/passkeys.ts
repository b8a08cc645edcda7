// Passkeys (WebAuthn credentials, src/authn/passkeys): what the store answers about them, the passkey
// (camelCase) and its row (./tables.ts) both ways, and their Kysely code; and the challenges already
// answered, which make each challenge single-use.
import type { OnConflictBuilder } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import type { AggregateClass } from './aggregate.ts';
import { insertEventsIf, insertEventsWhen } from './outbox.ts';
import type { Database, PasskeyRow } from './tables.ts';

export interface Passkey {
  /** Tessera's id of it. */
  id: string;
  userId: string;
  /** The authenticator's credential id, base64url. */
  credentialId: string;
  /** The COSE public key. */
  publicKey: Uint8Array<ArrayBuffer>;
  /** The signature counter last seen; 0 for an authenticator that keeps none. */
  counter: number;
  /** As the browser reported them at registration (internal, hybrid, usb, nfc, ble, …). */
  transports: string[];
  /** It may be synced to the user's other devices (WebAuthn's BE flag): fixed for its life. */
  backupEligible: boolean;
  backedUp: boolean;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
  /** When its counter went back and it was suspended (a cloned authenticator?); null: usable. */
  suspendedAt: number | null;
}

/** A challenge's use: its SHA-256 (hex), and when it would expire (kept until then). */
export interface ChallengeUse {
  hash: string;
  expiresAt: number;
}

/** What using a passkey changed: nothing when the counter did not move forward (a cloned authenticator?). */
export interface PasskeyUse {
  id: string;
  counter: number;
  backedUp: boolean;
  at: number;
}

export interface PasskeyStore {
  /** The user's passkeys, oldest first, suspended ones included. */
  listPasskeys(userId: string): Promise<Passkey[]>;
  /** Whether the user has a passkey that is not suspended (one they can sign in with). */
  hasPasskeys(userId: string): Promise<boolean>;
  getPasskeyByCredentialId(credentialId: string): Promise<Passkey | undefined>;
  /**
   * Records that the challenge was answered: true the first time, false ever after (until it has
   * expired, when the ceremony refuses it anyway). One conditional insert: of two requests at once,
   * exactly one wins.
   */
  spendChallenge(use: ChallengeUse): Promise<boolean>;
  /** Adds the passkey with its event; false (and no event) when its credential id is registered already. */
  addPasskey(passkey: Passkey, event: SecurityEvent): Promise<boolean>;
  /**
   * After a sign-in with it: the counter, backup state and last use. False when the counter has not
   * moved forward past the stored one (unless both are 0: an authenticator that keeps none), or the
   * passkey is suspended.
   */
  recordPasskeyUse(use: PasskeyUse): Promise<boolean>;
  /**
   * Suspends the user's passkey (its counter went back) with `event`, written only if this suspended
   * it: false when it is not there or was suspended already.
   */
  suspendPasskey(input: { userId: string; id: string; at: number }, event: SecurityEvent): Promise<boolean>;
  /** False when the user has no such passkey. */
  renamePasskey(input: { userId: string; id: string; name: string }, event: SecurityEvent): Promise<boolean>;
  /** Removes the user's passkey and ends every session of theirs but `keepSession`; false when none. */
  removePasskey(input: { userId: string; id: string; keepSession: string }, event: SecurityEvent): Promise<boolean>;
}

const toBase64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

function toPasskey(row: PasskeyRow): Passkey {
  return {
    id: row.id,
    userId: row.user_id,
    credentialId: row.credential_id,
    publicKey: new Uint8Array(Buffer.from(row.public_key, 'base64url')),
    counter: Number(row.sign_count),
    transports: JSON.parse(row.transports) as string[],
    backupEligible: row.backup_eligible === 1,
    backedUp: row.backed_up === 1,
    name: row.name,
    createdAt: Number(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
    suspendedAt: row.suspended_at === null || row.suspended_at === undefined ? null : Number(row.suspended_at),
  };
}

function fromPasskey(passkey: Passkey): PasskeyRow {
  return {
    id: passkey.id,
    user_id: passkey.userId,
    credential_id: passkey.credentialId,
    public_key: toBase64url(passkey.publicKey),
    sign_count: passkey.counter,
    transports: JSON.stringify(passkey.transports),
    backup_eligible: passkey.backupEligible ? 1 : 0,
    backed_up: passkey.backedUp ? 1 : 0,
    name: passkey.name,
    created_at: passkey.createdAt,
    last_used_at: passkey.lastUsedAt,
    suspended_at: passkey.suspendedAt,
  };
}

/** Passkeys: the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withPasskeys<Base extends AggregateClass>(Base: Base) {
  abstract class Passkeys extends Base implements PasskeyStore {
    async listPasskeys(userId: string): Promise<Passkey[]> {
      const rows = await this.db
        .selectFrom('passkeys')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toPasskey);
    }

    async hasPasskeys(userId: string): Promise<boolean> {
      return this.hasRowWith('passkeys', { user_id: userId, suspended_at: null });
    }

    async getPasskeyByCredentialId(credentialId: string): Promise<Passkey | undefined> {
      const row = await this.rowWith('passkeys', { credential_id: credentialId });
      return row && toPasskey(row);
    }

    async spendChallenge(use: ChallengeUse): Promise<boolean> {
      const once = (c: OnConflictBuilder<Database, 'webauthn_challenges'>) => c.column('hash').doNothing();
      const values = { hash: use.hash, expires_at: use.expiresAt };
      return (await this.write(this.db.insertInto('webauthn_challenges').values(values).onConflict(once))) === 1;
    }

    async addPasskey(passkey: Passkey, event: SecurityEvent): Promise<boolean> {
      const once = (c: OnConflictBuilder<Database, 'passkeys'>) => c.column('credential_id').doNothing();
      const inserted = this.db.insertInto('passkeys').values(fromPasskey(passkey)).onConflict(once);
      const recorded = insertEventsIf(this.db, event, this.#row(passkey.id, passkey.userId));
      return (await this.write(inserted, ...recorded)) === 1;
    }

    async recordPasskeyUse(use: PasskeyUse): Promise<boolean> {
      const set = { sign_count: use.counter, backed_up: use.backedUp ? 1 : 0, last_used_at: use.at };
      const updated = this.db
        .updateTable('passkeys')
        .set(set)
        .where('id', '=', use.id)
        .where('suspended_at', 'is', null)
        // WebAuthn §6.1.1: the counter moves forward, except on an authenticator that keeps none (0, 0).
        .where('sign_count', use.counter === 0 ? '=' : '<', use.counter);
      return (await this.write(updated)) === 1;
    }

    async suspendPasskey(input: { userId: string; id: string; at: number }, event: SecurityEvent): Promise<boolean> {
      const { userId, id } = input;
      const usable = this.db
        .selectFrom('passkeys')
        .select('id')
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('suspended_at', 'is', null);
      const suspended = this.db
        .updateTable('passkeys')
        .set({ suspended_at: input.at })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('suspended_at', 'is', null);
      // The event first, while the passkey is still usable: written only by the write that suspends it.
      const counts = await this.writeCounts(...insertEventsWhen(this.db, event, usable), suspended);
      return counts.at(-1) === 1;
    }

    async renamePasskey(input: { userId: string; id: string; name: string }, event: SecurityEvent): Promise<boolean> {
      const renamed = this.db
        .updateTable('passkeys')
        .set({ name: input.name })
        .where('id', '=', input.id)
        .where('user_id', '=', input.userId);
      const recorded = insertEventsIf(this.db, event, this.#row(input.id, input.userId));
      return (await this.write(renamed, ...recorded)) === 1;
    }

    async removePasskey(
      input: { userId: string; id: string; keepSession: string },
      event: SecurityEvent,
    ): Promise<boolean> {
      const { userId, id } = input;
      // Whoever signed in elsewhere is signed out (issue 33: a factor removed ends the other sessions),
      // only if the passkey is there to remove; the event likewise; then the passkey itself.
      const present = this.db.selectFrom('passkeys').select('id').where('id', '=', id).where('user_id', '=', userId);
      const others = this.endOtherSessions(userId, input.keepSession, event.at, present);
      const removed = this.db.deleteFrom('passkeys').where('id', '=', id).where('user_id', '=', userId).returning('id');
      const rows = await this.writeRows(...others, ...insertEventsIf(this.db, event, this.#row(id, userId)), removed);
      return rows.length > 0;
    }

    /** The passkey `id` of `userId`: its event is written only if it is there. */
    #row(id: string, userId: string) {
      return { passkey: id, userId };
    }
  }
  return Passkeys;
}
