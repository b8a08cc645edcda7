// The browser's sign-in session as the domain code sees it (src/http/browser.ts reads it from the cookie).
import type { User, UserStore } from '../store/users.ts';

/** The logged-in user of the browser, if any. */
export interface BrowserSession {
  id: string;
  userId: string;
  authTime: number;
  /** The user, when it was read with the session (undefined also when the user no longer exists). */
  user?: User | undefined;
  /** The scopes consented to for a client, when they were read with the session. */
  consented?: { clientId: string; scopes: string[] };
}

/** The session's user: the one read with it, or from the store. */
export async function sessionUser(store: UserStore, session: BrowserSession | undefined): Promise<User | undefined> {
  if (!session) return undefined;
  return 'user' in session ? session.user : store.getUserById(session.userId);
}
