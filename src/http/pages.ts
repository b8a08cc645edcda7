// The pages' language, per request: the person's own choice (the switch's `lang`, then kept in a
// cookie), else the interaction's ui_locales (sealed in it, so kept for the whole interaction), else
// Accept-Language, else TESSERA_DEFAULT_LOCALE. Only the browser routes (`config.html`) are given
// the settings this needs, when they are registered: nothing runs on the API's routes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isLocale, type Locale, negotiateLocale, translator } from '../i18n/index.ts';
import { type Brand, DEFAULT_BRAND } from '../ui/brand.ts';
import type { PageContext } from '../ui/layout.ts';
import { sendHtml } from './plugins/html.ts';

/** The cookie that keeps the language a person chose with the switch. */
export const LOCALE_COOKIE = 'tessera_locale';
/** A year: a preference, kept as long as a browser keeps it. */
const LOCALE_MAX_AGE = 365 * 86_400;

export interface PageSettings {
  /** The operator's brand (src/ui/brand.ts). */
  brand: Brand;
  defaultLocale: Locale;
  /** The issuer's origin: a form's answer gets a switch only to a page of ours (its Referer). */
  origin: string;
  secure: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on the browser routes when they are registered (registerPages). */
    pages?: PageSettings;
  }
}

/** Gives every browser route, as it is registered, what its pages need to choose their language. */
export function registerPages(app: FastifyInstance, settings: PageSettings): void {
  app.addHook('onRoute', (route) => {
    const config = route.config as { html?: boolean; pages?: PageSettings } | undefined;
    if (config?.html) route.config = { ...config, pages: settings };
  });
}

/** The ui_locales of the interaction a request is for (src/http/sign-in.ts openInteraction). */
const interactionLocales = new WeakMap<FastifyRequest, readonly string[]>();

/** The interaction's ui_locales choose this request's language (unless the person chose one). */
export function useInteractionLocales(request: FastifyRequest, uiLocales: readonly string[] | undefined): void {
  if (uiLocales && uiLocales.length > 0) interactionLocales.set(request, uiLocales);
}

function settingsOf(request: FastifyRequest): PageSettings {
  return request.routeOptions.config?.pages ?? { brand: DEFAULT_BRAND, defaultLocale: 'en', origin: '', secure: false };
}

function cookieName(settings: PageSettings): string {
  return `${settings.secure ? '__Host-' : ''}${LOCALE_COOKIE}`;
}

/** The `lang` the switch asked for on this request, if one we have. */
function switchedTo(request: FastifyRequest): Locale | undefined {
  const lang = (request.query as Record<string, unknown> | undefined)?.lang;
  return typeof lang === 'string' && isLocale(lang) ? lang : undefined;
}

/** The language of this request's page. */
export function localeOf(request: FastifyRequest): Locale {
  const settings = settingsOf(request);
  return negotiateLocale({
    chosen: switchedTo(request) ?? request.cookies[cookieName(settings)],
    uiLocales: interactionLocales.get(request),
    acceptLanguage: request.headers['accept-language'],
    fallback: settings.defaultLocale,
  });
}

/** The language of a browser route's page, for the events it records; none on the API's routes. */
export function pageLocaleOf(request: FastifyRequest): Locale | null {
  return request.routeOptions.config?.pages ? localeOf(request) : null;
}

/**
 * The address of this page with `lang` set: the request's own for a GET; for a form's answer, the page
 * the form was on (its Referer, ours only); none otherwise.
 */
function pageAddress(request: FastifyRequest, settings: PageSettings): URL | undefined {
  const base = settings.origin || 'http://localhost';
  if (request.method === 'GET') return new URL(request.url, base);
  const referer = request.headers.referer;
  const from = referer ? URL.parse(referer) : null;
  return from && from.origin === settings.origin ? from : undefined;
}

/** What a page of this request is rendered with; a `lang` from the switch is kept in its cookie. */
export function pageContext(request: FastifyRequest, reply: FastifyReply): PageContext {
  const settings = settingsOf(request);
  const switched = switchedTo(request);
  if (switched && request.cookies[cookieName(settings)] !== switched) {
    reply.setCookie(cookieName(settings), switched, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure: settings.secure,
      maxAge: LOCALE_MAX_AGE,
    });
  }
  const t = translator(localeOf(request));
  const address = pageAddress(request, settings);
  const languageHref = address
    ? (locale: Locale) => {
        const params = new URLSearchParams(address.search);
        params.set('lang', locale);
        return `${address.pathname}?${params}`;
      }
    : null;
  return { t, languageHref, brand: settings.brand };
}

/**
 * Sends a page rendered in this request's language, with the pages' headers (./plugins/html.ts); `csp`
 * in place of the pages' policy (a page that loads frames: framingCsp).
 */
export function sendPage(reply: FastifyReply, render: (ui: PageContext) => string, csp?: string): FastifyReply {
  return sendHtml(reply, render(pageContext(reply.request, reply)), csp);
}
