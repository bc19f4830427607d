// The web console (contract section 15): the front-end built from web/ into dist/web, served by this
// process at every path outside /api and the operational routes. Its client-side router decides
// what a path shows (a not-found page included). The installed apps are pages of their own with their
// service worker, manifest and icons beside them: the driver app (section 19) dist/web/driver/ at
// /driver/ and below, the customer app (section 20) dist/web/app/ at /app/ and below.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { App } from './context.js';

// src/http → the repository root; dist/http (the production build) → the same root.
export const WEB_DIST = fileURLToPath(new URL('../../dist/web/', import.meta.url));

const NOT_CONSOLE = /^\/(?:api|health|metrics)(?:[/?]|$)/;
/** The installed apps: each is the folder of dist/web of the same name, served at /<name>/. */
const INSTALLED_APPS = ['driver', 'app'] as const;
const appOf = (url: string) => INSTALLED_APPS.find((name) => new RegExp(`^/${name}(?:[/?]|$)`).test(url));

export function isConsolePath(url: string): boolean {
  return !NOT_CONSOLE.test(url);
}

/** The tiles' origin for img-src: `https://{s}.tile.example` becomes `https://*.tile.example`. */
export function tileOrigin(template: string): string {
  const match = /^(https?:\/\/[^/]+)/.exec(template.replace(/\{s\}/g, '*'));
  return match ? match[1] : '';
}

export function consoleHeaders(config: Pick<Config, 'web'>): Record<string, string> {
  return {
    // No inline script or style attribute in markup; Leaflet and React set styles through the CSSOM,
    // which style-src does not govern.
    'content-security-policy': [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      // blob: the proof-of-delivery images, fetched with the bearer header into object URLs (section 19).
      ["img-src 'self' data:", tileOrigin(config.web.mapTileUrl), 'blob:'].filter(Boolean).join(' '),
      "connect-src 'self'",
      "font-src 'self'",
      "object-src 'none'",
      "base-uri 'none'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ].join('; '),
    // /t/:token carries a secret in its path: it must not leave in a Referer (to the tile server, say).
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    // What the apps use (the driver app: the position, the camera for proof photos, the screen kept
    // awake while online; the customer app: the position), for this origin only; the rest is off.
    'permissions-policy': PERMISSIONS_POLICY,
  };
}

export const PERMISSIONS_POLICY =
  'geolocation=(self), camera=(self), screen-wake-lock=(self), microphone=(), payment=(), usb=()';

const escapeAttr = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/**
 * Registers /assets/* (hashed file names: cached for good) and returns the handler that answers
 * any other console path with index.html.
 */
export async function registerWebConsole(app: App, config: Config, dist = WEB_DIST) {
  const headers = consoleHeaders(config);
  const assets = path.join(dist, 'assets');
  if (existsSync(assets)) {
    await app.register(fastifyStatic, {
      root: assets,
      prefix: '/assets/',
      index: false,
      preCompressed: true,
      immutable: true,
      maxAge: '365d',
      setHeaders: (reply) => {
        reply.headers(headers);
      },
    });
  }

  // An app's files (sw.js, the manifest, the icons): not hashed, so revalidated every time; a service
  // worker script must never be cached for long, or a fixed app would not reach the phones. Any other
  // path under /<app>/ falls through to the not-found handler, which answers with the app's page.
  for (const name of INSTALLED_APPS) {
    const dir = path.join(dist, name);
    if (!existsSync(dir)) continue;
    await app.register(fastifyStatic, {
      root: dir,
      prefix: `/${name}/`,
      decorateReply: false,
      index: false,
      // A folder (/driver/ itself) is the page's, not a 403 from the file server.
      allowedPath: (pathName) => !pathName.endsWith('/'),
      cacheControl: false,
      setHeaders: (reply) => {
        reply.headers(headers).header('cache-control', 'no-cache');
      },
    });
  }

  const cached = new Map<string, { mtimeMs: number; html: string }>();
  const pageHtml = (file: string): string | undefined => {
    if (!existsSync(file)) return undefined;
    // Re-read after a rebuild while running (npm run build:web in another terminal).
    const { mtimeMs } = statSync(file);
    let page = cached.get(file);
    if (page?.mtimeMs !== mtimeMs) {
      page = { mtimeMs, html: readFileSync(file, 'utf8').replace('%MAP_TILE_URL%', escapeAttr(config.web.mapTileUrl)) };
      cached.set(file, page);
    }
    return page.html;
  };
  const consoleFile = path.join(dist, 'index.html');

  return (request: FastifyRequest, reply: FastifyReply) => {
    const url = request.url;
    const appName = appOf(url);
    // An app's scope is /driver/: relative to it, /driver alone would be outside.
    if (appName && (url === `/${appName}` || url.startsWith(`/${appName}?`)))
      return reply.redirect(`/${appName}/${url.slice(appName.length + 1)}`, 308);
    const html = pageHtml(appName ? path.join(dist, appName, 'index.html') : consoleFile);
    reply.headers(headers).header('cache-control', 'no-cache').type('text/html; charset=utf-8');
    if (html === undefined) {
      request.log.warn('the web console is not built (npm run build:web)');
      return reply
        .code(503)
        .send(
          '<!doctype html><title>Console not built</title><h1>The web console is not built</h1><p>Run <code>npm run build:web</code>, or start with <code>npm start</code>, which builds it.</p>',
        );
    }
    return reply.code(200).send(html);
  };
}
