// OpenID Connect RP-Initiated Logout 1.0 §2-3: validate the request, ask the user to confirm, end the
// session, return to a registered post_logout_redirect_uri with `state` or show a signed-out page.
import { compactVerify, decodeProtectedHeader } from 'jose';
import type { Config } from '../config/index.ts';
import { InvalidRequest } from '../errors/index.ts';
import { redirectWith } from '../oauth/redirect.ts';
import { UNSAFE_URI_CHARACTERS } from '../net/uri-characters.ts';
import { type ClientVetting, clientVetting, logoutReturnProblem } from '../oauth/registration/trust.ts';
import { type Params, rejectDuplicates, single } from '../oauth/params.ts';
import type { Client, ClientStore } from '../store/clients.ts';
import type { KeyStore } from '../tokens/keystore.ts';
import { Sealer } from '../tokens/sealed.ts';
import type { Secrets } from '../tokens/secrets.ts';

export interface LogoutRequest {
  clientId: string | null;
  clientName: string | null;
  postLogoutRedirectUri: string | null;
  state: string | null;
  exp: number;
  /** The browser the confirmation was shown in (src/http/browser.ts binding): refused in any other. */
  browser?: string;
}

export class LogoutSealer extends Sealer<LogoutRequest> {
  constructor(secrets: Secrets) {
    super(secrets, 'tessera logout v1');
  }
}

const LOGOUT_TTL = 10 * 60;

/**
 * The audience of an ID token we issued. Expiry is not checked: RP-Initiated Logout §2 lets an
 * expired ID token serve as the hint.
 */
async function idTokenHintAudience(keys: KeyStore, issuer: string, idToken: string): Promise<string> {
  try {
    const { kid } = decodeProtectedHeader(idToken);
    const key = kid ? keys.verificationKey(kid) : undefined;
    if (!key) throw new Error('unknown key');
    const { payload } = await compactVerify(idToken, key, { algorithms: ['RS256', 'ES256'] });
    const claims = JSON.parse(new TextDecoder().decode(payload)) as { iss?: unknown; aud?: unknown };
    if (claims.iss !== issuer) throw new Error('other issuer');
    const aud = Array.isArray(claims.aud) && claims.aud.length === 1 ? claims.aud[0] : claims.aud;
    if (typeof aud !== 'string') throw new Error('no single audience');
    return aud;
  } catch {
    throw new InvalidRequest('id_token_hint is not an ID token issued by this server');
  }
}

/**
 * The request, checked, and what the confirmation page says of its client. A client that registered
 * itself returns its user to a post_logout_redirect_uri only with an id_token_hint: the ID token it
 * was issued proves the request comes from it (../oauth/registration/trust.ts).
 */
export async function validateLogout(
  deps: { config: Pick<Config, 'issuer'>; store: ClientStore; keys: KeyStore },
  params: Params,
  now: number,
): Promise<{ logout: LogoutRequest; vetting: ClientVetting | undefined }> {
  rejectDuplicates(params);
  const hint = single(params, 'id_token_hint');
  let clientId = single(params, 'client_id') ?? null;
  if (hint) {
    const audience = await idTokenHintAudience(deps.keys, deps.config.issuer, hint);
    if (clientId !== null && clientId !== audience)
      throw new InvalidRequest('client_id does not match the id_token_hint');
    clientId = audience;
  }
  let client: Client | undefined;
  if (clientId !== null) {
    client = await deps.store.getClient(clientId);
    if (!client) throw new InvalidRequest('the client is unknown');
  }
  const postLogoutRedirectUri = single(params, 'post_logout_redirect_uri') ?? null;
  if (postLogoutRedirectUri !== null) {
    if (!client) throw new InvalidRequest('post_logout_redirect_uri needs client_id or id_token_hint');
    if (
      UNSAFE_URI_CHARACTERS.test(postLogoutRedirectUri) ||
      !client.postLogoutRedirectUris.includes(postLogoutRedirectUri)
    ) {
      throw new InvalidRequest('post_logout_redirect_uri is not registered for this client');
    }
    const problem = logoutReturnProblem(client, postLogoutRedirectUri, hint !== undefined);
    if (problem) throw new InvalidRequest(problem);
  }
  const logout = {
    clientId,
    clientName: client?.name ?? null,
    postLogoutRedirectUri,
    state: single(params, 'state') ?? null,
    exp: now + LOGOUT_TTL,
  };
  return { logout, vetting: client && clientVetting(client, postLogoutRedirectUri) };
}

/** The signed-out page, where a logout with no post_logout_redirect_uri ends. */
export const SIGNED_OUT = '/logout/done';

/** Where the user goes once signed out: the client's URI with `state`, or Tessera's page. */
export function afterLogout(request: LogoutRequest): string {
  if (request.postLogoutRedirectUri === null) return SIGNED_OUT;
  return redirectWith(request.postLogoutRedirectUri, { state: request.state });
}
