// The standard claims of OIDC Core §5.1 a user holds beyond their columns (name, given_name,
// family_name, email, updated_at), kept as one JSON object in users.claims: what they are, how a
// value is checked, and how a change is made. The object is parsed only when a request asks for one
// of its claims (./claims.ts): a session read, a refresh or userinfo that does not carries it unread.

/** An address (OIDC Core §5.1.1): its members, each a string. */
export const ADDRESS_MEMBERS = ['formatted', 'street_address', 'locality', 'region', 'postal_code', 'country'] as const;
export type Address = Partial<Record<(typeof ADDRESS_MEMBERS)[number], string>>;

/** The claims of the `profile` scope held as text, in the order they are listed and released. */
export const PROFILE_TEXT_CLAIMS = [
  'middle_name',
  'nickname',
  'profile',
  'picture',
  'website',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
] as const;

/** The claims held as text, in the order they are listed. */
export const TEXT_CLAIMS = [...PROFILE_TEXT_CLAIMS, 'phone_number'] as const;
export type TextClaim = (typeof TEXT_CLAIMS)[number];

export const HELD_CLAIMS = [...TEXT_CLAIMS, 'address', 'phone_number_verified'] as const;
export type HeldClaim = (typeof HELD_CLAIMS)[number];

export type HeldClaims = Partial<Record<TextClaim, string>> & { address?: Address; phone_number_verified?: boolean };

/** The held claims of a users.claims value; none for null or a value that is not an object. */
export function parseHeldClaims(raw: string | null | undefined): HeldClaims {
  if (!raw) return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as HeldClaims) : {};
  } catch {
    return {};
  }
}

const URL_CLAIMS: readonly string[] = ['profile', 'picture', 'website'];

function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return /^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(zone);
  } catch {
    return false;
  }
}

function validLocale(tag: string): boolean {
  try {
    return /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/.test(tag) && Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

function validBirthdate(value: string): boolean {
  if (/^\d{4}$/.test(value)) return true;
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  // §5.1: a year of 0000 means it was left out; the month and day must still make a date (2000 is a leap year).
  const year = match[1] === '0000' ? 2000 : Number(match[1]);
  const date = new Date(Date.UTC(year, Number(match[2]) - 1, Number(match[3])));
  return date.getUTCMonth() === Number(match[2]) - 1 && date.getUTCDate() === Number(match[3]);
}

/** A phone number as E.164 wants it: spaces, dots, dashes and brackets taken out. */
export function normalizePhone(value: string): string {
  return value.replace(/[\s.()-]/g, '');
}

/**
 * Why `value` cannot be the claim's (an operator's or a person's input, already trimmed), or
 * undefined when it can. Text is at most 256 characters, a URL at most 2048.
 */
export function claimProblem(claim: TextClaim, value: string): string | undefined {
  if (URL_CLAIMS.includes(claim)) {
    if (value.length > 2048) return 'at most 2048 characters';
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return 'an http or https URL';
    }
    return url.protocol === 'https:' || url.protocol === 'http:' ? undefined : 'an http or https URL';
  }
  if (value.length > 256) return 'at most 256 characters';
  if (/[\p{Cc}]/u.test(value)) return 'no control characters';
  switch (claim) {
    case 'birthdate':
      return validBirthdate(value) ? undefined : 'a year (YYYY) or a date (YYYY-MM-DD)';
    case 'zoneinfo':
      return validTimeZone(value) ? undefined : 'a time zone of the IANA database, such as Europe/Paris';
    case 'locale':
      return validLocale(value) ? undefined : 'a BCP 47 language tag, such as en-US';
    case 'phone_number':
      return /^\+[1-9]\d{1,14}(;ext=\d{1,10})?$/.test(normalizePhone(value))
        ? undefined
        : 'an international number in E.164 form, such as +33 1 23 45 67 89';
    default:
      return undefined;
  }
}

/** Why `value` cannot be an address (a JSON object of ADDRESS_MEMBERS' strings), or undefined. */
export function addressProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return `a JSON object of ${ADDRESS_MEMBERS.join(', ')}`;
  for (const [key, member] of Object.entries(value)) {
    if (!(ADDRESS_MEMBERS as readonly string[]).includes(key))
      return `no member ${key}: only ${ADDRESS_MEMBERS.join(', ')}`;
    if (typeof member !== 'string') return `${key} must be a string`;
    if (member.length > (key === 'formatted' ? 1024 : 256)) return `${key} is too long`;
  }
  return Object.keys(value).length === 0 ? 'at least one member' : undefined;
}

/** Changes to held claims: a value sets one, null clears it; absent ones stay. */
export type HeldClaimChanges = Partial<Record<TextClaim, string | null>> & {
  address?: Address | null;
  phone_number_verified?: boolean;
};

export class ClaimError extends Error {
  readonly claim: HeldClaim;
  constructor(claim: HeldClaim, problem: string) {
    super(`${claim}: ${problem}`);
    this.claim = claim;
  }
}

/**
 * The users.claims value after `changes` (null when no claim is left), and the claims changed;
 * a ClaimError for the first bad value. A new phone number is unverified unless the change says.
 */
export function applyClaimChanges(
  raw: string | null | undefined,
  changes: HeldClaimChanges,
): { claims: string | null; changed: HeldClaim[] } {
  const current = parseHeldClaims(raw);
  const next: HeldClaims = { ...current };
  for (const claim of TEXT_CLAIMS) {
    const value = changes[claim];
    if (value === undefined) continue;
    const trimmed = value === null ? '' : value.trim();
    if (trimmed === '') delete next[claim];
    else {
      const problem = claimProblem(claim, trimmed);
      if (problem) throw new ClaimError(claim, problem);
      next[claim] = claim === 'phone_number' ? normalizePhone(trimmed) : trimmed;
    }
  }
  if (changes.address !== undefined) {
    if (changes.address === null) delete next.address;
    else {
      const problem = addressProblem(changes.address);
      if (problem) throw new ClaimError('address', problem);
      next.address = changes.address;
    }
  }
  if (next.phone_number !== current.phone_number) delete next.phone_number_verified;
  if (changes.phone_number_verified !== undefined) {
    if (changes.phone_number_verified && next.phone_number === undefined)
      throw new ClaimError('phone_number_verified', 'there is no phone number to verify');
    next.phone_number_verified = changes.phone_number_verified;
  }
  if (next.phone_number === undefined) delete next.phone_number_verified;
  const changed = HELD_CLAIMS.filter((claim) => JSON.stringify(next[claim]) !== JSON.stringify(current[claim]));
  const ordered = Object.fromEntries(HELD_CLAIMS.filter((c) => next[c] !== undefined).map((c) => [c, next[c]]));
  return { claims: Object.keys(ordered).length === 0 ? null : JSON.stringify(ordered), changed };
}
