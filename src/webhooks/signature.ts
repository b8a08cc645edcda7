// Standard Webhooks signatures (https://www.standardwebhooks.com): a secret is `whsec_` and base64
// of 32 random bytes; a message is signed as `v1,` and base64 of HMAC-SHA256(secret, "{id}.{timestamp}.{body}"),
// several signatures (the secret before a rotation, during its grace) separated by spaces.
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
