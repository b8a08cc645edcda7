// A person as an upstream provider vouches for them, in the OpenID Connect claims' words (OIDC Core
// §5.1), whichever kind of provider it was.

export interface UpstreamIdentity {
  /** The provider's stable identifier of the person: `sub`, or GitHub's numeric user id. */
  subject: string;
  email: string | null;
  /** Whether the provider says it verified the email (`email_verified` true; GitHub's `verified`). */
  emailVerified: boolean;
  preferredUsername: string | null;
  name: string | null;
  givenName: string | null;
  familyName: string | null;
  /** The provider's own `amr` (RFC 8176), as it stated it; empty when it stated none. */
  amr: string[];
}

const text = (value: unknown): string | null =>
  typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, 256) : null;

/** An identity from OpenID Connect claims: the ID token's, then the userinfo's for what it lacks. */
export function identityFromClaims(subject: string, ...sources: Array<Record<string, unknown>>): UpstreamIdentity {
  const claim = (name: string) => sources.map((s) => s[name]).find((v) => v !== undefined && v !== null);
  const email = text(claim('email'));
  const amr = sources[0]?.amr;
  return {
    subject,
    email,
    // OIDC Core §5.1: email_verified is a boolean; anything else ("true" as a string) is not a yes.
    emailVerified: email !== null && claim('email_verified') === true,
    preferredUsername: text(claim('preferred_username')),
    name: text(claim('name')),
    givenName: text(claim('given_name')),
    familyName: text(claim('family_name')),
    amr: Array.isArray(amr) ? amr.filter((v): v is string => typeof v === 'string').slice(0, 16) : [],
  };
}
