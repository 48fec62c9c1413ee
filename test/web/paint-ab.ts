// A/B of the 10,000-message paint with the service worker controlling the page and blocked, loads interleaved
// (`npx tsx test/web/paint-ab.ts`; AB_MESSAGES, AB_ROUNDS). Not a test: prints medians; docs/web.md, "Budgets".
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
import { startStack } from '../../services/stack.js';
import { createLogger } from '../../shared/logger.js';
import { newWorkspace, testEnv } from '../support/stack.js';
import { launchBrowser } from './browser.js';

const MESSAGES = Number(process.env.AB_MESSAGES ?? 10_000);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 15);
const whenShown = (id: string) => `(() => {
  const check = () => {
    if (window.__shownAt !== undefined) return;
    const el = document.querySelector('[data-message-id="${id}"]');
    if (!el || !el.checkVisibility({ visibilityProperty: true })) return;
    const r = el.getBoundingClientRect();
    if (r.height === 0 || r.bottom <= 0 || r.top >= innerHeight) return;
    window.__shownAt = -1;
    requestAnimationFrame(() => { window.__shownAt = performance.now(); });
  };
  new MutationObserver(check).observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ['style'] });
})()`;
const q = (a: number[], p: number) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.ceil((p / 100) * a.length) - 1)]!;

const env = testEnv();
const stack = await startStack(env.config, createLogger('silent'));
const b = await launchBrowser();
try {
  const ws = await newWorkspace(stack);
  const ch = (await ws.owner.post('/api/v1/channels', { name: 'ab' })).body.data.id as string;
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => { while (next < MESSAGES) { next++; await ws.owner.post(`/api/v1/channels/${ch}/messages`, { content: `history ${next}` }); } }));
  const last = (await ws.owner.post(`/api/v1/channels/${ch}/messages`, { content: 'newest' })).body.data.id as string;
  const pages = [];
  for (const sw of ['allow', 'block'] as const) {
    const made = await fetch(`${stack.url}/api/v1/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${ws.ownerKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'ab' }) });
    const key = ((await made.json()) as { data: { key: string } }).data.key;
    const ctx = await b.browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: stack.url, serviceWorkers: sw });
    const page = await ctx.newPage();
    await page.addInitScript({ content: whenShown(last) });
    await page.goto(`/#key=${encodeURIComponent(key)}`);
    await page.locator('[data-stream-state="live"]').waitFor();
    if (sw === 'allow') await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    pages.push({ sw, page, times: [] as number[] });
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const p of r % 2 ? [...pages].reverse() : pages) {
      await p.page.goto('/settings');
      await p.page.locator('.settings').waitFor();
      await p.page.goto(`/c/${ch}`);
      p.times.push(Number(await (await p.page.waitForFunction(() => (window as unknown as { __shownAt: number }).__shownAt > 0 && (window as unknown as { __shownAt: number }).__shownAt)).jsonValue()));
    }
  }
  for (const p of pages) console.log(`service worker ${p.sw}: median ${q(p.times, 50).toFixed(0)} ms (p25 ${q(p.times, 25).toFixed(0)}, p75 ${q(p.times, 75).toFixed(0)}) over ${ROUNDS} loads`);
} finally {
  await b.close();
  await stack.close();
  await env.cleanup();
}
