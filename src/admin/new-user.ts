// A user made by the operator (`tessera users create`, POST /admin/api/v1/users) or by the
// development demo: a username and address checked, roles given at once, `user.created` recorded.
import { CLI, type Requester, securityEvent } from '../events/index.ts';
import type { User, UserStore } from '../store/users.ts';
import type { HeldClaimChanges } from '../tokens/held-claims.ts';
import { newId } from '../tokens/opaque.ts';
import { AdminError, ConflictError } from './errors.ts';
import { checkRoles } from './roles.ts';
import { emailProblem, heldClaimsAfter, usernameProblem } from './users.ts';

export interface CreateUserInput {
  username: string;
  email: string;
  name?: string | undefined;
  givenName?: string | undefined;
  familyName?: string | undefined;
  emailVerified?: boolean;
  passwordHash?: string | null;
  /** Roles given at once (`--role`, `--admin`: src/admin/roles.ts). */
  roles?: string[];
  /** The standard claims held beyond the names (src/tokens/held-claims.ts). */
  claims?: HeldClaimChanges;
}

export async function createUser(
  store: UserStore,
  _config: unknown,
  input: CreateUserInput,
  now = Math.floor(Date.now() / 1000),
  requester: Requester = CLI,
): Promise<User> {
  const problem = usernameProblem(input.username);
  if (problem) throw new AdminError(`--username: ${problem}`);
  const emailIsNot = emailProblem(input.email);
  if (emailIsNot) throw new AdminError(`--email: ${emailIsNot}`);
  if (await store.getUserByUsername(input.username))
    throw new ConflictError(`a user named ${input.username} exists already`);
  const { claims } = heldClaimsAfter(null, input.claims);
  const user: User = {
    id: newId(),
    username: input.username,
    email: input.email,
    emailVerified: input.emailVerified ?? true,
    name: input.name ?? null,
    givenName: input.givenName ?? null,
    familyName: input.familyName ?? null,
    passwordHash: input.passwordHash ?? null,
    disabled: false,
    createdAt: now,
    updatedAt: now,
    roles: checkRoles(input.roles ?? [], '--role'),
    claims,
  };
  const data = user.roles.length > 0 ? { roles: user.roles } : undefined;
  await store.createUser(
    user,
    securityEvent('user.created', now, { userId: user.id, requester, ...(data ? { data } : {}) }),
  );
  return user;
}
