// Second factors besides passkeys (src/authn/totp/step.ts, src/authn/recovery/step.ts): each user's
// authenticator app (its secret encrypted under TESSERA_SECRET, and the last time step a code was
// accepted for) and recovery codes (hashed), and their Kysely code. Every use is one conditional
// update, so that of two requests bringing the same code at once exactly one wins.
import type { SecurityEvent } from '../events/index.ts';
import type { AggregateClass } from './aggregate.ts';
import { insertEventsWhen } from './outbox.ts';
import { endSessions } from './session-ends.ts';
import type { TotpCredentialRow } from './tables.ts';

export interface TotpCredential {
  userId: string;
  /** The secret, encrypted (src/tokens/at-rest.ts, purpose `totpSecret`). */
  secretEnc: string;
  /** The last time step a code was accepted for; 0 before the first. */
  lastStep: number;
  createdAt: number;
  lastUsedAt: number | null;
}

/** What the account page and `tessera users mfa show` say of a user's recovery codes. */
export interface RecoveryCodeSummary {
  unused: number;
  used: number;
  createdAt: number | null;
  lastUsedAt: number | null;
}

/** What an operator's reset removed. */
export interface SecondFactorReset {
  totp: boolean;
  recoveryCodes: number;
  sessions: number;
}

export interface SecondFactorStore {
  getTotp(userId: string): Promise<TotpCredential | undefined>;
  hasTotp(userId: string): Promise<boolean>;
  /**
   * Adds the user's authenticator app with its event, and `recoveryCodes` (hashes) with it: nothing
   * (false) when the user has one already.
   */
  enrolTotp(credential: TotpCredential, recoveryCodes: string[], event: SecurityEvent): Promise<boolean>;
  /** A code of `step` accepted: true only if `step` is past the last one accepted (one write). */
  useTotpStep(input: { userId: string; step: number; at: number }): Promise<boolean>;
  /**
   * Removes the user's authenticator app (and, with `recoveryCodes`, their recovery codes) and ends
   * every session of theirs but `keepSession`; false when they had none.
   */
  removeTotp(
    input: { userId: string; keepSession: string; recoveryCodes: boolean },
    event: SecurityEvent,
  ): Promise<boolean>;
  hasRecoveryCodes(userId: string): Promise<boolean>;
  recoveryCodeSummary(userId: string): Promise<RecoveryCodeSummary>;
  /** Replaces every recovery code of the user with `hashes`, with its event. */
  replaceRecoveryCodes(input: { userId: string; hashes: string[]; now: number }, event: SecurityEvent): Promise<void>;
  /** Spends the code: true only for the use that found it unused; its event is written only then. */
  useRecoveryCode(input: { userId: string; hash: string; at: number }, event: SecurityEvent): Promise<boolean>;
  /**
   * An operator's reset (`tessera users mfa reset`): the authenticator app and recovery codes removed
   * and every session ended, with the event, in one write.
   */
  resetSecondFactors(userId: string, event: SecurityEvent): Promise<SecondFactorReset>;
}

function toCredential(row: TotpCredentialRow): TotpCredential {
  return {
    userId: row.user_id,
    secretEnc: row.secret_enc,
    lastStep: Number(row.last_step),
    createdAt: Number(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
  };
}

/** Authenticator apps and recovery codes: the Kysely code, on top of `Base` (./kysely-store.ts). */
export function withSecondFactors<Base extends AggregateClass>(Base: Base) {
  abstract class SecondFactors extends Base implements SecondFactorStore {
    async getTotp(userId: string): Promise<TotpCredential | undefined> {
      const row = await this.rowWith('totp_credentials', { user_id: userId });
      return row && toCredential(row);
    }

    async hasTotp(userId: string): Promise<boolean> {
      return this.hasRowWith('totp_credentials', { user_id: userId });
    }

    async enrolTotp(credential: TotpCredential, recoveryCodes: string[], event: SecurityEvent): Promise<boolean> {
      const { userId, secretEnc, createdAt } = credential;
      const values = {
        user_id: userId,
        secret_enc: secretEnc,
        last_step: credential.lastStep,
        created_at: createdAt,
        last_used_at: credential.lastUsedAt,
      };
      const inserted = this.db
        .insertInto('totp_credentials')
        .values(values)
        .onConflict((c) => c.column('user_id').doNothing());
      // This enrolment's row (its encrypted secret has a random IV: no other has the same).
      const ours = this.db
        .selectFrom('totp_credentials')
        .select('user_id')
        .where('user_id', '=', userId)
        .where('secret_enc', '=', secretEnc);
      const codes = recoveryCodes.map((hash) =>
        this.db
          .insertInto('recovery_codes')
          .columns(['user_id', 'hash', 'created_at'])
          .expression(
            this.db
              .selectNoFrom((eb) => [
                eb.val(userId).as('user_id'),
                eb.val(hash).as('hash'),
                eb.val(createdAt).as('created_at'),
              ])
              .where((eb) => eb.exists(ours)),
          ),
      );
      return (await this.write(inserted, ...codes, ...insertEventsWhen(this.db, event, ours))) === 1;
    }

    async useTotpStep(input: { userId: string; step: number; at: number }): Promise<boolean> {
      const updated = this.db
        .updateTable('totp_credentials')
        .set({ last_step: input.step, last_used_at: input.at })
        .where('user_id', '=', input.userId)
        .where('last_step', '<', input.step);
      return (await this.write(updated)) === 1;
    }

    async removeTotp(
      input: { userId: string; keepSession: string; recoveryCodes: boolean },
      event: SecurityEvent,
    ): Promise<boolean> {
      const { userId } = input;
      const present = this.db.selectFrom('totp_credentials').select('user_id').where('user_id', '=', userId);
      // The other sessions end, the event is written and the codes go only if there is an app to remove.
      const others = this.endOtherSessions(userId, input.keepSession, event.at, present);
      const codes = input.recoveryCodes
        ? [
            this.db
              .deleteFrom('recovery_codes')
              .where('user_id', '=', userId)
              .where((eb) => eb.exists(present)),
          ]
        : [];
      const removed = this.db.deleteFrom('totp_credentials').where('user_id', '=', userId).returning('user_id');
      const rows = await this.writeRows(...others, ...insertEventsWhen(this.db, event, present), ...codes, removed);
      return rows.length > 0;
    }

    async hasRecoveryCodes(userId: string): Promise<boolean> {
      return this.hasRowWith('recovery_codes', { user_id: userId, used_at: null });
    }

    async recoveryCodeSummary(userId: string): Promise<RecoveryCodeSummary> {
      const rows = await this.db
        .selectFrom('recovery_codes')
        .select(['created_at', 'used_at'])
        .where('user_id', '=', userId)
        .execute();
      const used = rows.filter((r) => r.used_at !== null).map((r) => Number(r.used_at));
      return {
        unused: rows.length - used.length,
        used: used.length,
        createdAt: rows.length === 0 ? null : Math.max(...rows.map((r) => Number(r.created_at))),
        lastUsedAt: used.length === 0 ? null : Math.max(...used),
      };
    }

    async replaceRecoveryCodes(
      input: { userId: string; hashes: string[]; now: number },
      event: SecurityEvent,
    ): Promise<void> {
      const { userId, now } = input;
      const rows = input.hashes.map((hash) => ({ user_id: userId, hash, created_at: now, used_at: null }));
      await this.write(
        this.db.deleteFrom('recovery_codes').where('user_id', '=', userId),
        this.db.insertInto('recovery_codes').values(rows),
        ...this.events(event),
      );
    }

    async useRecoveryCode(input: { userId: string; hash: string; at: number }, event: SecurityEvent): Promise<boolean> {
      const spent = this.db
        .updateTable('recovery_codes')
        .set({ used_at: input.at, used_event: event.id })
        .where('user_id', '=', input.userId)
        .where('hash', '=', input.hash)
        .where('used_at', 'is', null);
      // Written only by the use whose update marked the code with this event's id.
      const won = this.db.selectFrom('recovery_codes').select('hash').where('used_event', '=', event.id);
      return (await this.write(spent, ...insertEventsWhen(this.db, event, won))) === 1;
    }

    async resetSecondFactors(userId: string, event: SecurityEvent): Promise<SecondFactorReset> {
      const totp = await this.hasTotp(userId);
      const { unused, used } = await this.recoveryCodeSummary(userId);
      // The clients signed in from the sessions that end are told (Back-Channel Logout 1.0), in the same write.
      const ended = endSessions(this.db, { userId }, { now: event.at });
      const counts = await this.writeCounts(
        ...ended,
        this.db.deleteFrom('totp_credentials').where('user_id', '=', userId),
        this.db.deleteFrom('recovery_codes').where('user_id', '=', userId),
        ...this.events(event),
      );
      return { totp, recoveryCodes: unused + used, sessions: counts[ended.length - 1]! };
    }
  }
  return SecondFactors;
}
