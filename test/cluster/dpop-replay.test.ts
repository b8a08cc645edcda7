// DPoP across two instances over one PostgreSQL database (RFC 9449 §11.1, §8): a proof's jti used at
// one instance is refused at the other, and a nonce one instance hands out the other accepts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startCluster, type Cluster } from '../helpers/instances.ts';
import { dpopKey, dpopProof } from '../helpers/dpop.ts';
import { basic } from '../helpers/tokens.ts';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';

describe('DPoP proofs across two instances over one PostgreSQL database', async () => {
  const database: TestDatabase | undefined = await withPostgresDatabase();
  const skip = !database && 'PostgreSQL unreachable';
  let cluster: Cluster;
  before(async () => {
    if (!database) return;
    cluster = await startCluster(database.url, { env: { TESSERA_DPOP_NONCE: 'true' } });
  });
  after(async () => {
    await cluster?.stop();
    await database?.drop();
  });

  /** A refresh at `url` with a refresh token that is not one: only the proof decides the error. */
  const tokenRequest = (url: string, proof: string) => {
    const { id, secret } = cluster.clients.confidential;
    return fetch(`${url}/oauth2/token`, {
      method: 'POST',
      headers: { authorization: basic(id, secret!), dpop: proof },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x~1~y' }),
    });
  };
  const error = async (response: Response) => ((await response.json()) as { error: string }).error;

  it(
    'a nonce from one instance is accepted by the other; a proof used at one is refused at the other',
    { skip },
    async () => {
      const [a, b] = cluster.instances.map((instance) => instance.url) as [string, string];
      // The proofs name the issuer's token endpoint (the balancer's), which every instance serves.
      const htu = `${cluster.issuer}/oauth2/token`;
      const key = await dpopKey();
      const asked = await tokenRequest(a, await dpopProof(key, 'POST', htu));
      assert.equal(await error(asked), 'use_dpop_nonce');
      const nonce = asked.headers.get('dpop-nonce')!;
      const proof = await dpopProof(key, 'POST', htu, { claims: { nonce } });
      // Accepted at b (the refresh token is what fails), then refused at a: its jti is used.
      assert.equal(await error(await tokenRequest(b, proof)), 'invalid_grant');
      const replayed = await tokenRequest(a, proof);
      assert.equal(replayed.status, 400);
      assert.equal(await error(replayed), 'invalid_dpop_proof');
    },
  );
});
