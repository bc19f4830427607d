// What the browser tests (the console, the driver app, the customer app) share: a started instance
// (the real entry point, SMS to a file, the embedded database or one on the test server), the
// operating system's Chromium through Playwright, the SMS codes, API calls, a phone layout check and
// a watch on every page for uncaught errors and CSP violations.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { serverDatabaseUrl } from './database.js';
import { freePort, spawnNode, waitFor, type NodeProcess } from './processes.js';

function onPath(names: string[]): string | undefined {
  for (const name of names) {
    try {
      return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
    } catch {
      // not this one
    }
  }
  return undefined;
}

export const chromiumPath = process.env.CHROMIUM_PATH || onPath(['chromium', 'chromium-browser', 'google-chrome']);

/** `describe`'s skip option: false with a Chromium, else the reason (`what` names the tests). */
export const chromiumSkip = (what: string): false | string =>
  chromiumPath ? false : `no Chromium on PATH (apt-get install chromium): ${what} browser tests are skipped`;

/** The operating system's Chromium, headless, through Playwright. */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });

export interface BrowserHarnessOptions {
  /** The temporary data folder's prefix. */
  tmpPrefix: string;
  /** The password `apiLogin` uses unless told another. */
  password: string;
  /** Environment on top of the common one (development, loopback, SMS to a file). */
  env: Record<string, string>;
}

export interface BrowserHarness {
  readonly base: string;
  readonly server: NodeProcess;
  readonly browser: Browser;
  /** The admin password of the first start's banner ('' when the environment set one). */
  readonly adminPassword: string;
  readonly pageErrors: string[];
  readonly cspViolations: string[];
  smsCount(phone: string): number;
  smsCode(phone: string, before: number): Promise<string>;
  call<T = Record<string, unknown>>(
    method: string,
    url: string,
    token?: string,
    body?: unknown,
    expected?: number[],
  ): Promise<T>;
  apiLogin(identifier: string, phone: string, password?: string): Promise<string>;
  /** Records the page's uncaught errors and CSP violations. */
  watch(page: Page): Page;
}

/**
 * Registers the `before` (build the web apps when stale, start the instance, launch Chromium) and
 * `after` hooks of the enclosing `describe`, and gives what the tests use once they have run.
 */
export function useBrowserHarness(options: BrowserHarnessOptions): BrowserHarness {
  let server: NodeProcess;
  let base = '';
  let dataDir = '';
  let smsFile = '';
  let adminPassword = '';
  let browser: Browser;
  let database: { url?: string; close(): Promise<void> } | undefined;
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];

  before(async () => {
    const { buildWeb, staleReason } = await import('../../scripts/build-web.mjs');
    if (staleReason()) assert.ok(buildWeb().ok, 'the web apps build');
    dataDir = await mkdtemp(path.join(tmpdir(), options.tmpPrefix));
    smsFile = path.join(dataDir, 'sms.log');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const env: Record<string, string> = {
      NODE_ENV: 'development',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      SMS_TRANSPORT: 'file',
      SMS_FILE: smsFile,
      // The flows post positions kilometres apart a moment later (a teleport, as the API tests do):
      // plausibility is tested in test/positions.test.ts.
      MAX_PLAUSIBLE_SPEED: 'off',
      ...options.env,
    };
    if (serverDatabaseUrl) {
      const { createTestDatabase } = await import('./database.js');
      database = await createTestDatabase({ migrate: false });
      env.DATABASE_URL = database.url!;
    }
    server = spawnNode(['--import', 'tsx', 'src/server.ts'], env);
    await waitFor(() => server.output().includes('"msg":"ready"'), 90_000, 'the server', server.output);
    adminPassword = /Password: (\S+)/.exec(server.stdout())?.[1] ?? '';
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await database?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const smsCount = (phone: string) =>
    existsSync(smsFile)
      ? readFileSync(smsFile, 'utf8')
          .split('\n')
          .filter((l) => l.includes(`"${phone}"`)).length
      : 0;

  async function smsCode(phone: string, before: number): Promise<string> {
    let code = '';
    await waitFor(
      () => {
        if (!existsSync(smsFile)) return false;
        const lines = readFileSync(smsFile, 'utf8')
          .split('\n')
          .filter((l) => l.includes(`"${phone}"`));
        if (lines.length <= before) return false;
        code = /\b(\d{6})\b/.exec((JSON.parse(lines[lines.length - 1]) as { text: string }).text)?.[1] ?? '';
        return code !== '';
      },
      10_000,
      `an SMS to ${phone}`,
    );
    return code;
  }

  async function call<T = Record<string, unknown>>(
    method: string,
    url: string,
    token?: string,
    body?: unknown,
    expected = [200, 201, 202, 204],
  ): Promise<T> {
    const res = await fetch(`${base}/api${url}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    assert.ok(expected.includes(res.status), `${method} ${url}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : {}) as T;
  }

  async function apiLogin(identifier: string, phone: string, password = options.password): Promise<string> {
    const before = smsCount(phone);
    const step = await call<{ sessionId: string; phone: string }>('POST', '/auth/login', undefined, {
      identifier,
      password,
    });
    const code = await smsCode(phone, before);
    return (
      await call<{ accessToken: string }>('POST', '/auth/login/verify-otp', undefined, {
        sessionId: step.sessionId,
        phone: step.phone,
        code,
      })
    ).accessToken;
  }

  function watch(page: Page): Page {
    page.on('pageerror', (err) => pageErrors.push(`${page.url()}: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && /Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });
    return page;
  }

  return {
    get base() {
      return base;
    },
    get server() {
      return server;
    },
    get browser() {
      return browser;
    },
    get adminPassword() {
      return adminPassword;
    },
    pageErrors,
    cspViolations,
    smsCount,
    smsCode,
    call,
    apiLogin,
    watch,
  };
}

/** Phone layout: nothing wider than the screen, and every control (a radio's or checkbox's label) at least 48 px tall. */
export async function assertPhoneLayout(page: Page, what: string): Promise<void> {
  const layout = await page.evaluate(() => {
    const small: string[] = [];
    for (const el of document.querySelectorAll<HTMLElement>('button, a.button, input, select')) {
      // A radio button or a checkbox is tapped through its label, the whole of which is the target.
      const target = el.matches('input[type=radio], input[type=checkbox]') ? (el.closest('label') ?? el) : el;
      const box = target.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      if (box.height < 48)
        small.push(
          `${el.tagName} "${(el.textContent || el.getAttribute('aria-label') || (el as HTMLInputElement).labels?.[0]?.textContent || '').trim()}" ${Math.round(box.height)} px`,
        );
    }
    return { scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth, small };
  });
  // A mobile browser widens its layout to the content: the page must fit the screen it was given.
  layout.width = Math.min(layout.width, page.viewportSize()?.width ?? layout.width);
  assert.ok(
    layout.scrollWidth <= layout.width,
    `${what}: no horizontal scrolling (${layout.scrollWidth} > ${layout.width})`,
  );
  assert.deepEqual(layout.small, [], `${what}: touch targets of 48 px at least`);
}
