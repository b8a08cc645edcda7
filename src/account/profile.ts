// The claims a person owns (OIDC Core §5.1), changed by them on the account page: their name parts,
// nickname, picture, website, time zone, language, birthdate and phone number. The operator's own
// (gender, profile, address, a verified phone) are `tessera users update`'s. Records `user.updated`
// with the claims changed, as the operator's change does.
import { type Requester, securityEvent } from '../events/index.ts';
import type { User, UserStore } from '../store/users.ts';
import { applyClaimChanges, ClaimError, type TextClaim } from '../tokens/held-claims.ts';

/** The fields of the account page's form, in their order: the user's columns, then held claims. */
export const PROFILE_FIELDS = [
  'given_name',
  'middle_name',
  'family_name',
  'nickname',
  'picture',
  'website',
  'zoneinfo',
  'locale',
  'birthdate',
  'phone_number',
] as const;
export type ProfileField = (typeof PROFILE_FIELDS)[number];

export type ProfileOutcome = { kind: 'saved'; changed: string[] } | { kind: 'invalid'; field: ProfileField };

/** Sets the fields given (an empty one clears its claim); `invalid` names the first bad one, nothing written. */
export async function updateOwnProfile(
  store: Pick<UserStore, 'updateUserProfile'>,
  input: { user: User; fields: Partial<Record<ProfileField, string>>; requester?: Requester; now: number },
): Promise<ProfileOutcome> {
  const { user, fields, now } = input;
  const name = (value: string | undefined, current: string | null) =>
    value === undefined ? current : value.trim() === '' ? null : value.trim().slice(0, 256);
  const next: User = { ...user, givenName: name(fields.given_name, user.givenName) };
  next.familyName = name(fields.family_name, user.familyName);
  const changes: Partial<Record<TextClaim, string>> = {};
  for (const field of PROFILE_FIELDS) {
    const value = fields[field];
    if (value !== undefined && field !== 'given_name' && field !== 'family_name') changes[field] = value;
  }
  let held;
  try {
    held = applyClaimChanges(user.claims, changes);
  } catch (err) {
    if (err instanceof ClaimError) return { kind: 'invalid', field: err.claim as ProfileField };
    throw err;
  }
  next.claims = held.claims;
  const changed = [
    ...(next.givenName !== user.givenName ? ['given_name'] : []),
    ...(next.familyName !== user.familyName ? ['family_name'] : []),
    ...held.changed,
  ];
  if (changed.length === 0) return { kind: 'saved', changed };
  next.updatedAt = now;
  const event = securityEvent('user.updated', now, { userId: user.id, requester: input.requester, data: { changed } });
  await store.updateUserProfile(next, [event]);
  return { kind: 'saved', changed };
}
