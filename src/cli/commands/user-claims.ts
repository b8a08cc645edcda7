// The options of `tessera users create|update` for the standard claims a user holds beyond their
// names and email (OIDC Core §5.1, src/tokens/held-claims.ts): one option each, an empty value or
// `--clear CLAIM` removing one.
import {
  type Address,
  HELD_CLAIMS,
  type HeldClaim,
  type HeldClaimChanges,
  TEXT_CLAIMS,
} from '../../tokens/held-claims.ts';
import { UsageError } from '../operations.ts';

/** A claim's option: its name with dashes (`--middle-name`, `--phone-number`). */
export const optionOf = (claim: HeldClaim) => claim.replaceAll('_', '-');

export const CLAIM_OPTIONS = {
  ...Object.fromEntries(TEXT_CLAIMS.map((claim) => [optionOf(claim), { type: 'string' } as const])),
  address: { type: 'string' },
  'phone-number-verified': { type: 'boolean' },
  clear: { type: 'string', multiple: true },
} as const satisfies Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;

/** The claim changes the options ask for; none when they name none. */
export function claimChanges(values: Record<string, unknown>): HeldClaimChanges {
  const changes: HeldClaimChanges = {};
  for (const claim of TEXT_CLAIMS) {
    const value = values[optionOf(claim)];
    if (typeof value === 'string') changes[claim] = value;
  }
  if (typeof values.address === 'string')
    changes.address = values.address.trim() === '' ? null : parseAddress(values.address);
  if (values['phone-number-verified'] === true) changes.phone_number_verified = true;
  for (const item of (values.clear as string[] | undefined) ?? []) {
    for (const name of item.split(',').map((n) => n.trim().replaceAll('-', '_'))) {
      if (!(HELD_CLAIMS as readonly string[]).includes(name))
        throw new UsageError(`--clear: one of ${HELD_CLAIMS.join(', ')}`);
      if (name === 'phone_number_verified') changes.phone_number_verified = false;
      else changes[name as Exclude<HeldClaim, 'phone_number_verified'>] = null;
    }
  }
  return changes;
}

function parseAddress(json: string): Address {
  try {
    return JSON.parse(json) as Address;
  } catch {
    throw new UsageError('--address: a JSON object such as {"street_address":"1 Main St","locality":"Springfield"}');
  }
}
