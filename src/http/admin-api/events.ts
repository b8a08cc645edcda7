// /admin/api/v1/events: the audit trail, newest first, a page at a time (src/admin/events.ts), each
// event with its actor; /admin/api/v1/keys: the signing keys' public parts and states, and a rotation.
import type { FastifyInstance } from 'fastify';
import { describeEvent, listEventPage } from '../../admin/events.ts';
import { EVENT_TYPES } from '../../events/index.ts';
import { rotateKey } from '../../tokens/key-rotation.ts';
import { SIGNING_ALGS, type SigningAlg } from '../../tokens/keystore.ts';
import type { AdminApi } from './context.ts';
import { problems } from './schemas.ts';

const nullable = { type: ['string', 'null'] } as const;
const object = (properties: Record<string, unknown>) =>
  ({ type: 'object', required: Object.keys(properties), additionalProperties: false, properties }) as const;

export const EVENT_SCHEMA = {
  $id: 'Event',
  ...object({
    id: { type: 'string' },
    at: { type: 'string', description: 'RFC 3339, UTC' },
    type: { type: 'string', enum: [...EVENT_TYPES] },
    user_id: nullable,
    client_id: nullable,
    ip: nullable,
    user_agent: nullable,
    request_id: nullable,
    actor: { type: ['string', 'null'], description: 'cli, client:<client_id> or user:<id>; null: the person themself' },
    data: { type: ['object', 'null'], additionalProperties: true },
  }),
} as const;

interface EventsQuery {
  type?: string;
  user?: string;
  client?: string;
  request?: string;
  since?: string;
  limit: number;
  cursor?: string;
}

const iso = (at: number | null) => (at === null ? null : new Date(at * 1000).toISOString());

export function eventAndKeyRoutes(app: FastifyInstance, api: AdminApi): void {
  app.get<{ Querystring: EventsQuery }>(
    '/events',
    {
      schema: {
        tags: ['events'],
        summary: 'Events, newest first: by type, user (username or id), client, request id, since (a date or 24h, 7d)',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            type: { type: 'string', enum: [...EVENT_TYPES] },
            user: { type: 'string', maxLength: 256 },
            client: { type: 'string', maxLength: 2048 },
            request: { type: 'string', maxLength: 256 },
            since: { type: 'string', maxLength: 64 },
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
            cursor: { type: 'string', maxLength: 512 },
          },
        },
        response: {
          200: object({ items: { type: 'array', items: { $ref: 'Event#' } }, next_cursor: nullable }),
          ...problems(400, 404),
        },
      },
    },
    async (request) => {
      const page = await listEventPage(api.store, request.query, api.now());
      return { items: page.events.map(describeEvent), next_cursor: page.nextCursor };
    },
  );

  const KEY = object({
    kid: { type: 'string' },
    alg: { type: 'string' },
    state: { type: 'string', description: 'next (published, not signing yet), active, retired, expired' },
    created_at: { type: 'string' },
    activates_at: { type: 'string' },
    retires_at: nullable,
    removed_at: nullable,
    public_jwk: {
      type: ['object', 'null'],
      additionalProperties: true,
      description: 'the public key as the JWKS publishes it',
    },
  });

  app.get(
    '/keys',
    {
      schema: {
        tags: ['keys'],
        summary: 'The signing keys: their public parts and states (never a private key)',
        response: { 200: object({ items: { type: 'array', items: KEY } }), ...problems() },
      },
    },
    async () => {
      const published = api.keys.jwks().keys;
      const items = api.keys
        .states()
        .map((k) => ({
          kid: k.kid,
          alg: k.alg,
          state: k.state,
          created_at: iso(k.createdAt),
          activates_at: iso(k.activatesAt),
          retires_at: iso(k.retiresAt),
          removed_at: iso(k.removedAt),
          public_jwk: published.find((jwk) => jwk.kid === k.kid) ?? null,
        }));
      return { items };
    },
  );

  app.post<{ Body: { alg?: SigningAlg; now: boolean } }>(
    '/keys/rotate',
    {
      schema: {
        tags: ['keys'],
        summary: 'Stage a new signing key (it signs once every cached JWKS has it), or with now, at once',
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            alg: { type: 'string', enum: [...SIGNING_ALGS], description: 'TESSERA_SIGNING_ALG by default' },
            now: { type: 'boolean', default: false, description: 'for a compromised key: the new one signs at once' },
          },
        },
        response: {
          200: object({
            kid: { type: 'string' },
            alg: { type: 'string' },
            activates_at: { type: 'string' },
            already: { type: 'boolean', description: 'a rotation was under way already: its key' },
          }),
          ...problems(400, 415),
        },
      },
    },
    async (request) => {
      const alg = request.body.alg ?? api.config.signingAlg;
      const rotation = await rotateKey(api.keys, alg, {
        emergency: request.body.now,
        requester: api.requester(request),
      });
      return {
        kid: rotation.kid,
        alg: rotation.alg,
        activates_at: iso(rotation.activatesAt),
        already: rotation.already,
      };
    },
  );
}
