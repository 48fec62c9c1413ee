// Chromium for the web app's tests: the same binary as test/support/browser.ts
// (which gives one persistent context; these tests need several contexts, one
// per person), one browser per test file, a fresh profile each time. Every page records page errors and CSP violations
// so a test can fail on them. The app is the production build (built by
// `npm install`; built here if missing).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'chai';
import { CHROMIUM_PATH } from '../support/browser.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SCREENSHOTS = path.join(ROOT, 'test-artifacts', 'web');

export function ensureWebBuild() {
  if (!existsSync(path.join(ROOT, 'services/web/dist/index.html'))) {
    execFileSync('npm', ['run', '--silent', 'build:web'], { cwd: ROOT, stdio: 'inherit' });
  }
}

export interface TestBrowser {
  browser: Browser;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  ensureWebBuild();
  const profile = mkdtempSync(path.join(os.tmpdir(), 'axid-chromium-'));
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    // Playwright gives the browser a fresh temporary profile of its own; HOME and XDG point at ours.
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    env: { ...process.env, XDG_CONFIG_HOME: profile, XDG_CACHE_HOME: profile, HOME: profile },
  });
  return {
    browser,
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The browser of a describe block: launched before its tests, closed after
 * them, and after each test its pages closed (screenshots kept on failure:
 * afterEachTest). Call it at the top of the block; the object stands for the
 * browser once the block runs.
 */
export function suiteBrowser(): TestBrowser {
  let launched: TestBrowser | undefined;
  before(async () => {
    launched = await launchBrowser();
  });
  afterEach(async function () {
    await afterEachTest(this);
  });
  after(async () => launched?.close());
  return {
    get browser() {
      if (!launched) throw new Error('suiteBrowser(): the browser starts in the describe block\'s before hook');
      return launched.browser;
    },
    close: async () => launched?.close(),
  };
}

export interface AppPage {
  context: BrowserContext;
  page: Page;
  problems: string[];
  /** Fails when the page threw or broke the CSP. */
  assertClean(): void;
}

/** A new context (its own storage) with the app open at `path`. */
export async function openApp(
  b: TestBrowser,
  baseUrl: string,
  urlPath = '/',
  viewport = { width: 1280, height: 800 },
  colorScheme: 'light' | 'dark' = 'light',
): Promise<AppPage> {
  const context = await b.browser.newContext({ viewport, baseURL: baseUrl, acceptDownloads: true, colorScheme });
  return openTab(context, urlPath);
}

/** Another tab in a context (same storage: signed in if the first tab was), watched like the first. */
export async function openTab(context: BrowserContext, urlPath: string): Promise<AppPage> {
  const page = await context.newPage();
  openPages.add(page);
  page.on('close', () => openPages.delete(page));
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  await page.exposeBinding('__cspViolation', (_source, text: string) => void problems.push(`CSP violation: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as unknown as { __cspViolation(t: string): void }).__cspViolation(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  await page.goto(urlPath);
  return {
    context,
    page,
    problems,
    assertClean() {
      expect(problems, problems.join('\n')).to.deep.equal([]);
    },
  };
}

/**
 * Opens the app signed in as the holder of `key` through a one-time link
 * (`/#key=...`). The link carries a key made for it from `key`: the app
 * revokes a link's key once it has made its own, and tests go on using `key`.
 */
export async function signedIn(
  b: TestBrowser,
  baseUrl: string,
  key: string,
  urlPath = '/',
  viewport?: { width: number; height: number },
  colorScheme?: 'light' | 'dark',
) {
  const made = await fetch(`${baseUrl}/api/v1/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Sign-in link (test)' }),
  });
  expect(made.status, 'a key for the sign-in link').to.equal(201);
  const linkKey = ((await made.json()) as { data: { key: string } }).data.key;
  const app = await openApp(b, baseUrl, `${urlPath}#key=${encodeURIComponent(linkKey)}`, viewport, colorScheme);
  // The chat shows the stream's state; the settings page has no stream indicator.
  // (Attached, not visible: on a narrow screen the sidebar holding it is hidden.)
  await app.page.locator('[data-stream-state="live"], .settings').first().waitFor({ state: 'attached' });
  return app;
}

const openPages = new Set<Page>();

/** For an afterEach hook: keeps a screenshot of every open page when a test failed, then closes them. */
export async function afterEachTest(ctx: Mocha.Context) {
  const failed = ctx.currentTest?.state === 'failed';
  let n = 0;
  for (const page of openPages) {
    if (failed) await screenshot(page, `failed-${(ctx.currentTest?.title ?? 'test').replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}-${++n}`).catch(() => undefined);
    await page.context().close().catch(() => undefined);
  }
  openPages.clear();
}

export async function screenshot(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  // Web fonts (the emoji fallback) drawn first.
  await page.evaluate(() => document.fonts.ready.then(() => undefined)).catch(() => undefined);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core run in the page (evaluated through the debugging protocol, so the CSP stays as it is): serious or critical violations. */
export async function axeProblems(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const r = await (window as unknown as { axe: { run(o: unknown): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe.run({
      resultTypes: ['violations'],
    });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id}: ${v.targets.join(', ')}`);
}
