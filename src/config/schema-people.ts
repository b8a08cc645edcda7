// The settings of what people see and receive, part of the one schema (./schema.ts): the upstream
// providers they sign in with, the pages' language and brand, the webhook and mail outboxes, and
// sign-up. Each option is documented beside its default, as in ./schema.ts.
import { z } from 'zod';
import { LOCALES } from '../i18n/locales.ts';
import { secret } from './setting-kinds.ts';

export const PEOPLE_SETTINGS = {
  /**
   * TESSERA_DEFAULT_PROVIDER: the id of an upstream provider (`tessera providers`) that a sign-in page
   * sends people straight to, as if every request said `idp_hint`; the way back to local sign-in stays.
   */
  TESSERA_DEFAULT_PROVIDER: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'a provider id: lowercase letters, digits and -')
    .optional(),
  /**
   * TESSERA_DEFAULT_LOCALE: the pages' language when neither the client's ui_locales nor the browser's
   * Accept-Language names one Tessera has (src/i18n/locales.ts).
   */
  TESSERA_DEFAULT_LOCALE: z.enum(LOCALES).default('en'),
  /**
   * TESSERA_BRAND_NAME: the product name every page shows at its top and in its title (default
   * `Tessera`), and mails name the service by (unless TESSERA_MAIL_PRODUCT_NAME says otherwise).
   */
  TESSERA_BRAND_NAME: z.string().trim().min(1).max(64).optional(),
  /**
   * TESSERA_BRAND_LOGO: a PNG, JPEG, GIF, WebP or SVG file (at most 512 KiB) shown beside the name,
   * served from Tessera's own origin (src/ui/brand.ts); none by default.
   */
  TESSERA_BRAND_LOGO: z.string().min(1).optional(),
  /**
   * TESSERA_BRAND_COLOR: the primary colour (buttons, links, focus), `#rgb` or `#rrggbb`; the text on it
   * is black or white, whichever contrasts more, and links fall back to a darker or lighter shade where
   * it would not reach 4.5:1 (src/ui/styles.ts).
   */
  TESSERA_BRAND_COLOR: z
    .string()
    .regex(/^#(?:[0-9a-fA-F]{3}){1,2}$/, 'a colour as #rgb or #rrggbb')
    .default('#2f5bea'),
  /**
   * TESSERA_BRAND_STYLESHEET: a CSS file of the operator's (at most 256 KiB), served from Tessera's origin
   * and applied after Tessera's own styles; it cannot hide the client's name or the notice of an
   * unreviewed client (docs/languages-and-branding.md).
   */
  TESSERA_BRAND_STYLESHEET: z.string().min(1).optional(),
  /**
   * TESSERA_UPSTREAM_TIMEOUT: seconds the requests of one step with an upstream provider may take in all
   * (discovery before the redirect; the token, keys and userinfo at the callback); then the person gets
   * a page saying the provider did not answer.
   */
  TESSERA_UPSTREAM_TIMEOUT: z.coerce.number().min(1).max(30).default(8),
  /** TESSERA_WEBHOOK_INTERVAL: seconds between an instance's looks at the webhook outbox and the mail outbox. */
  TESSERA_WEBHOOK_INTERVAL: z.coerce.number().min(0.05).default(1),
  /** TESSERA_WEBHOOKS_PER_USER: the most webhooks one user may have (/api/webhooks); the operator's are not counted. */
  TESSERA_WEBHOOKS_PER_USER: z.coerce.number().int().min(0).max(1000).default(10),
  /**
   * TESSERA_SMTP_URL: the mail server mails are sent through (src/mail): `smtp://host:587` (STARTTLS
   * required) or `smtps://host:465` (TLS from the start), with `user:password@` if it asks for them;
   * `smtp://localhost:25?disable_starttls=true` for a relay on this machine (loopback only, no TLS).
   * Unset: in development mails go to the log, links included; in production the features that send
   * mail (password reset, invitations, verification, sign-up) are off.
   */
  TESSERA_SMTP_URL: secret(z.url({ protocol: /^smtps?$/, error: 'an smtp:// or smtps:// URL' }).optional()),
  /** TESSERA_SMTP_PASSWORD: the mail server's password, when it is not in TESSERA_SMTP_URL. */
  TESSERA_SMTP_PASSWORD: secret(z.string().min(1).optional()),
  /** TESSERA_MAIL_FROM: the From of mails, e.g. `Example <no-reply@example.com>`; default no-reply@ the issuer. */
  TESSERA_MAIL_FROM: z.string().min(3).optional(),
  /** TESSERA_MAIL_PRODUCT_NAME: what mails and their subjects call the service; default the issuer's host. */
  TESSERA_MAIL_PRODUCT_NAME: z.string().min(1).max(100).optional(),
  /**
   * TESSERA_SECURITY_MAIL: `on` (default): a person is told by mail, at their verified address, of each
   * change to how their account is signed in to (a provider linked, a passkey or authenticator app
   * added, recovery codes made or used, the password or the address changed, a passkey suspended),
   * with when, from which browser and address, and what to do if it was not them (docs/mail.md).
   * `off`: none of these mails. Needs mail.
   */
  TESSERA_SECURITY_MAIL: z.enum(['on', 'off']).default('on'),
  /**
   * TESSERA_SIGNUP: `off` (default), `open` (the sign-in page offers "Create an account"; the address is
   * verified before the account exists) or `invite` (only the operator's invitations). Needs mail.
   */
  TESSERA_SIGNUP: z.enum(['off', 'open', 'invite']).default('off'),
  /** TESSERA_SIGNUP_DOMAINS: with `open`, only addresses of these domains (comma-separated) may sign up; empty: any. */
  TESSERA_SIGNUP_DOMAINS: z.string().default(''),
  /** TESSERA_DEMO: create a demo user and clients on the first start of an empty database. */
  TESSERA_DEMO: z.enum(['true', 'false']).optional(),
};
