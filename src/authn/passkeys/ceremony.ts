// A WebAuthn ceremony's challenge. The challenge is the ceremony itself, sealed (../../tokens/sealed.ts):
// what it is for, whose it is, the browser it was given to and until when; so the authenticator signs
// over all of that, and Tessera keeps nothing per page shown (a sign-in page offers a passkey to
// every visitor). A challenge is answered once: the store records its hash when it is used
// (PasskeyStore.spendChallenge), until it would have expired.
import { hashToken, randomToken } from '../../tokens/opaque.ts';
import { perEpoch, type RestoreEpoch } from '../../tokens/epoch.ts';
import { Sealer } from '../../tokens/sealed.ts';
import type { Secrets } from '../../tokens/secrets.ts';

/** How long a challenge may be answered: a sign-in page left open for a while still works. */
export const CHALLENGE_TTL = 10 * 60;

export type CeremonyPurpose = 'authenticate' | 'register';

export interface Ceremony {
  purpose: CeremonyPurpose;
  /** The user it is for (registering, or a later step's); null for a sign-in where the passkey names the user. */
  userId: string | null;
  /** The browser it was given to (src/http/browser.ts binding): refused in any other. */
  browser: string;
  iat: number;
  exp: number;
  /** 256 random bits: no two challenges alike (WebAuthn §13.4.3). */
  nonce: string;
}

class CeremonySealer extends Sealer<Ceremony> {
  /**
   * `restoreEpoch` (src/store/restores.ts): a challenge sealed before a restore does not open after
   * it, since the restore brings back no record of the challenges answered after the backup.
   */
  constructor(secret: Secrets, restoreEpoch: string) {
    super(secret, `tessera webauthn ceremony v1${restoreEpoch ? ` ${restoreEpoch}` : ''}`);
  }
}

/** A challenge answered: the ceremony, and the challenge as the browser returned it (base64url). */
export interface OpenedCeremony {
  ceremony: Ceremony;
  challenge: string;
}

export class Ceremonies {
  readonly #sealer: () => CeremonySealer;

  constructor(secret: Secrets, restoreEpoch: RestoreEpoch = '') {
    this.#sealer = perEpoch(restoreEpoch, (epoch) => new CeremonySealer(secret, epoch));
  }

  /** A new challenge, as the string whose UTF-8 bytes the options carry. */
  challenge(input: { purpose: CeremonyPurpose; userId: string | null; browser: string }, now: number): string {
    return this.#sealer().seal({ ...input, iat: now, exp: now + CHALLENGE_TTL, nonce: randomToken() });
  }

  /**
   * The ceremony of a challenge as the browser returned it (clientDataJSON's base64url `challenge`),
   * if Tessera sealed it, for `purpose`, in this browser (`isBound`), and it has not expired.
   */
  open(
    challenge: string,
    input: { purpose: CeremonyPurpose; isBound: (browser: string) => boolean; now: number },
  ): OpenedCeremony | undefined {
    if (challenge.length > 2048) return undefined;
    const sealed = Buffer.from(challenge, 'base64url').toString('utf8');
    const ceremony = this.#sealer().open(sealed, input.now);
    if (!ceremony || ceremony.purpose !== input.purpose || !input.isBound(ceremony.browser)) return undefined;
    return { ceremony, challenge };
  }
}

/** What the store records of a challenge once answered. */
export function challengeUse(opened: OpenedCeremony): { hash: string; expiresAt: number } {
  return { hash: hashToken(opened.challenge), expiresAt: opened.ceremony.exp };
}
