// What DPoP (RFC 9449) adds to a refresh: CPU of the whole process per refresh at the token endpoint
// (SQLite, in-process through Fastify's inject), without a proof and with one signed ES256 or
// PS256, in alternating rounds; and the proof's check alone (src/tokens/dpop-proof.ts) per alg, and
// the jti's write alone. The proofs are signed before each round is measured: the client's signing
// is not the server's cost.
//
//   node bench/dpop.ts        DPOP_N (500 refreshes per round)  DPOP_ROUNDS (4)
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { verifyDpopProof } from '../src/tokens/dpop-proof.ts';
import { BrowserSim } from '../test/helpers/browser-sim.ts';
import { startServer } from '../test/helpers/server.ts';
import { basic } from '../test/helpers/tokens.ts';

const N = Number(process.env.DPOP_N ?? 500);
const ROUNDS = Number(process.env.DPOP_ROUNDS ?? 4);
const ALGS = ['ES256', 'PS256'] as const;

interface ProofKey {
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function proofKey(alg: string): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  return { alg, privateKey, jwk: await exportJWK(publicKey) };
}

function proof(key: ProofKey, htu: string): Promise<string> {
  const claims = { htm: 'POST', htu, jti: randomUUID(), iat: Math.floor(Date.now() / 1000) };
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.jwk }).sign(key.privateKey);
}

/** CPU (user + system, every thread) per call, µs. */
async function cpuPerCall(n: number, f: (i: number) => Promise<unknown>): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await f(i);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

const server = await startServer({ env: { TESSERA_SIGNING_ALG: 'ES256' } });
try {
  const c = server.clients.confidential;
  const htu = `${server.issuer}/oauth2/token`;
  const keys = Object.fromEntries(await Promise.all(ALGS.map(async (alg) => [alg, await proofKey(alg)])));
  const authorization = basic(c.id, c.secret!);

  // One grant, refreshed on and on: each refresh presents the newest token.
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    client_id: c.id,
    redirect_uri: c.redirectUri,
    response_type: 'code',
    scope: 'openid email',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const callback = await new BrowserSim(server.issuer).authorize(
    `${server.issuer}/oauth2/authorize?${query}`,
    server.user,
  );
  const refresh = async (form: Record<string, string>, dpop?: string) => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { authorization, 'content-type': 'application/x-www-form-urlencoded', ...(dpop ? { dpop } : {}) },
      payload: new URLSearchParams(form).toString(),
    });
    if (response.statusCode !== 200) throw new Error(`${response.statusCode} ${response.body}`);
    return response.json() as { refresh_token: string; token_type: string };
  };
  let { refresh_token: token } = await refresh({
    grant_type: 'authorization_code',
    code: callback.searchParams.get('code')!,
    redirect_uri: c.redirectUri,
    code_verifier: verifier,
  });

  const workloads = ['Bearer', ...ALGS] as const;
  const results = new Map<string, number[]>(workloads.map((w) => [w, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const workload of workloads) {
      const proofs =
        workload === 'Bearer' ? [] : await Promise.all(Array.from({ length: N }, () => proof(keys[workload], htu)));
      const us = await cpuPerCall(N, async (i) => {
        const answer = await refresh({ grant_type: 'refresh_token', refresh_token: token }, proofs[i]);
        token = answer.refresh_token;
      });
      if (round > 0) results.get(workload)!.push(us);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(`CPU per refresh, whole process (median of ${ROUNDS - 1} rounds of ${N}, after one to warm up):`);
  const bearer = median(results.get('Bearer')!);
  for (const workload of workloads) {
    const us = median(results.get(workload)!);
    const extra = workload === 'Bearer' ? '' : `  (+${(us - bearer).toFixed(0)} µs)`;
    console.log(
      `  ${(workload === 'Bearer' ? 'without a proof' : `DPoP ${workload}`).padEnd(16)} ${us.toFixed(0).padStart(6)} µs${extra}`,
    );
  }
  console.log('The proof check alone (verifyDpopProof: signature, claims, thumbprint), CPU per proof:');
  for (const alg of ALGS) {
    const proofs = await Promise.all(Array.from({ length: N }, () => proof(keys[alg], htu)));
    const now = Math.floor(Date.now() / 1000);
    const us = await cpuPerCall(N, (i) => verifyDpopProof(proofs[i]!, { method: 'POST', url: htu, now }));
    console.log(`  ${alg.padEnd(16)} ${us.toFixed(0).padStart(6)} µs`);
  }
  const expires = Math.floor(Date.now() / 1000) + 300;
  const write = await cpuPerCall(N, () => server.store.useOnce(randomUUID(), expires));
  console.log(`The jti's write alone (store.useOnce, a SQLite insert and its commit): ${write.toFixed(0)} µs`);
} finally {
  await server.close();
}
