// Refresh tokens. A grant is a family of refresh tokens, each rotated away by the next (RFC 9700
// §4.14.2), and its row holds the family's state: the generation of the one token that is current,
// when it expires and when it was issued. A token names its grant and its generation and is
// authenticated by an HMAC-SHA-256 over both under a key derived from TESSERA_SECRET:
//
//   {grant id}~{generation, base 36}~{base64url(HMAC(key, "{grant id}~{generation}"))}
//
// So a rotation updates one row instead of inserting a token and consuming another, and any token
// of the family, current or long rotated away, is recognised as genuine: one of an earlier
// generation is a replay, and revokes the family. Nothing stored is a token or leads to one without
// the secret. `~` is unreserved in URLs and appears neither in base64url nor in JWTs.
import { createHmac, type KeyObject } from 'node:crypto';
import { macMatches, purposeKeys } from './sealed.ts';
import type { Secrets } from './secrets.ts';

export interface RefreshTokenId {
  grantId: string;
  generation: number;
}

const SEPARATOR = '~';
/** Longer grant ids or generations than any this server makes are refused before any hashing. */
const MAX_LENGTH = 200;
const GENERATION = /^[0-9a-z]{1,10}$/;

export class RefreshTokens {
  /** Per secret of the keyring, newest first (./secrets.ts): tokens are issued under the first. */
  readonly #keys: KeyObject[];
  constructor(secrets: Secrets) {
    this.#keys = purposeKeys(secrets, 'tessera refresh token v2');
  }

  /** The token of generation `generation` of the grant `grantId`: the same token every time. */
  issue(grantId: string, generation: number): string {
    const body = `${grantId}${SEPARATOR}${generation.toString(36)}`;
    return `${body}${SEPARATOR}${this.#mac(this.#keys[0]!, body)}`;
  }

  /** The grant and generation a token names; undefined when it is not one this server issued. */
  parse(token: string): RefreshTokenId | undefined {
    if (token.length > MAX_LENGTH) return undefined;
    const last = token.lastIndexOf(SEPARATOR);
    const first = token.indexOf(SEPARATOR);
    if (first <= 0 || last === first) return undefined;
    const body = token.slice(0, last);
    const generation = token.slice(first + 1, last);
    if (!GENERATION.test(generation)) return undefined;
    // A token issued under a previous secret (before a rotation) is checked only when the newest fails.
    if (!macMatches(this.#keys, body, token.slice(last + 1))) return undefined;
    return { grantId: token.slice(0, first), generation: parseInt(generation, 36) };
  }

  #mac(key: KeyObject, body: string): string {
    return createHmac('sha256', key).update(body).digest('base64url');
  }
}
