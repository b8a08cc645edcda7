// What a link's redemption does (./mails.ts redeemMailToken), built as statements that run in the same
// write as the token's use, each conditioned on that very use (`redeemed`: the token row carrying
// this redemption's nonce), so that of two redemptions at once only one has any effect; and the
// condition that the effect was made, which the event and a notice mail are written under.
import type { Kysely } from 'kysely';
import type { insertEventsWhen } from './outbox.ts';
import { rowValues } from './row-values.ts';
import { endSessions } from './session-ends.ts';
import type { Database } from './tables.ts';
import { fromUser, type User } from './users.ts';

type Condition = Parameters<typeof insertEventsWhen>[2];

/** What a redemption does, in the same write as the token's use. */
export type Redemption =
  /** A new password (a reset, an invitation), only while the password is still `previous`; every session ends. */
  | { kind: 'password'; userId: string; previous: string | null; passwordHash: string; verifyEmail: string | null }
  /** The user's address becomes `email`, verified. */
  | { kind: 'email'; userId: string; email: string }
  /** A sign-up's account, created verified (nothing when the username was taken meanwhile). */
  | { kind: 'account'; user: User };

/** The effect's statements (the first tells whether it was made) and the condition that it was made. */
export function redemptionEffects(db: Kysely<Database>, effect: Redemption, redeemed: Condition, now: number) {
  // The user `id`, there once this write's redemption has been made.
  const redeemedUser = (id: string) =>
    db
      .selectFrom('users')
      .select('id')
      .where('id', '=', id)
      .where((eb) => eb.exists(redeemed));
  if (effect.kind === 'password') {
    const { userId, passwordHash } = effect;
    const set = db
      .updateTable('users')
      .set({ password_hash: passwordHash })
      .where('id', '=', userId)
      .where((eb) =>
        effect.previous === null ? eb('password_hash', 'is', null) : eb('password_hash', '=', effect.previous),
      )
      .where((eb) => eb.exists(redeemed));
    const done = db.selectFrom('users').select('id').where('id', '=', userId).where('password_hash', '=', passwordHash);
    const verify = effect.verifyEmail
      ? [
          db
            .updateTable('users')
            .set({ email_verified: 1 })
            .where('id', '=', userId)
            .where('email', '=', effect.verifyEmail)
            .where((eb) => eb.exists(done)),
        ]
      : [];
    // Whoever was signed in, with the old password or a stolen session, is signed out, and the clients
    // they signed in to are told (Back-Channel Logout 1.0).
    const ended = endSessions(db, { userId }, { now, when: done });
    return [[set, ...verify, ...ended], done.where((eb) => eb.exists(redeemed))] as const;
  }
  if (effect.kind === 'email') {
    const set = db
      .updateTable('users')
      .set({ email: effect.email, email_verified: 1 })
      .where('id', '=', effect.userId)
      .where((eb) => eb.exists(redeemed));
    return [[set], redeemedUser(effect.userId)] as const;
  }
  const row = fromUser(effect.user);
  const { columns, values } = rowValues(db, row);
  const taken = db.selectFrom('users').select('id').where('username', '=', row.username);
  const free = values.where((eb) => eb.and([eb.exists(redeemed), eb.not(eb.exists(taken))]));
  const insert = db.insertInto('users').columns(columns).expression(free);
  return [[insert], redeemedUser(row.id)] as const;
}
