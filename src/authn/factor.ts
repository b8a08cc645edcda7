// One factor of a sign-in as a session records it: what the steps verify, the flow gathers, the store
// keeps and ./factors.ts adds up. A file with no imports, so that whatever records or checks a factor
// names it without importing the list of steps (./registry.ts) that adds factors up.
/** One factor done: by which step (./registry.ts), what it says in `amr` (RFC 8176 §2), and when. */
export interface Factor {
  /** The step's name (./registry.ts): `password` today; `passkey`, `totp`, `recovery-code` to come. */
  method: string;
  /** RFC 8176 values this use of the step contributes, e.g. ["pwd"]; a passkey's are ["hwk", "user"]. */
  amr: string[];
  /** When, epoch seconds. */
  at: number;
}
