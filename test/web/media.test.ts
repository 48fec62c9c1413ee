// The web app's media and installable shell (issue 34): code blocks coloured
// only once on screen, a posted PDF's first page as a preview, and the app
// installed (manifest, service worker) and opening offline with its banner.
// Found by role and accessible name, against the production build.
import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { uploadFile } from '../support/files.js';
import { newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';
import { axeProblems, screenshot, signedIn, suiteBrowser } from './browser.js';

const DIST = new URL('../../services/web/dist/', import.meta.url);

async function channelWith(ws: TestWorkspace) {
  const res = await ws.owner.post('/api/v1/channels', { name: uniqueName('media') });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.data as { id: string; name: string };
}

async function post(ws: TestWorkspace, channelId: string, body: Record<string, unknown>) {
  const res = await ws.owner.post(`/api/v1/channels/${channelId}/messages`, body);
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.data as { id: string };
}

/** Paths of the app's files the page asked for, as they are asked. */
function assetRequests(page: Page) {
  const paths: string[] = [];
  page.on('request', (r) => {
    const p = new URL(r.url()).pathname;
    if (p.startsWith('/assets/')) paths.push(p);
  });
  return paths;
}

/** The width and height a PNG says it has (its IHDR chunk). */
const pngSize = (b: Buffer) => [b.readUInt32BE(16), b.readUInt32BE(20)];

async function axeAt(page: Page, tag: string, problems: string[]) {
  for (const p of await axeProblems(page)) problems.push(`${tag}: ${p}`);
}

describe('web app: media and the installable app', function () {
  this.timeout(120_000);
  const b = suiteBrowser();

  it('colours a code block only once it is on screen, in the language it names or a confident guess', async () => {
    const ws = await newWorkspace();
    const ch = await channelWith(ws);
    const named = await post(ws, ch.id, { content: 'Python, named:\n\n```python\ndef greet(name):\n    # say hello\n    return f"hello {name}"\n```' });
    const guessed = await post(ws, ch.id, { content: 'No language given:\n\n```\nconst fs = require("fs");\nfunction readConfig(path) {\n  return JSON.parse(fs.readFileSync(path, "utf8"));\n}\n```' });
    // content_json's code block names its language in attrs.
    const fromJson = await post(ws, ch.id, {
      content: 'interface User { id: string }',
      content_json: { type: 'doc', content: [{ type: 'code_block', attrs: { language: 'ts' }, content: [{ type: 'text', text: 'interface User {\n  id: string;\n}\nexport const me: User = { id: "1" };' }] }] },
    });
    for (let i = 1; i <= 30; i++) await post(ws, ch.id, { content: `later message ${i}` });

    const app = await signedIn(b, stack().url, ws.ownerKey);
    const page = app.page;
    const requested = assetRequests(page);
    await page.goto(`/c/${ch.id}`);
    await page.getByRole('article', { name: /later message 30$/ }).waitFor();
    const codeOf = (id: string) => page.locator(`[data-message-id="${id}"] pre`);
    // Scrolled away (the list may keep the row in the DOM, but it is not on screen): plain, and no highlighter loaded.
    expect(await page.locator('pre[data-highlighted]').count()).to.equal(0);
    expect(requested.filter((p) => /\/(highlight|python|typescript|javascript)-/.test(p))).to.deep.equal([]);

    // Scrolled to the top: each block is coloured, with the grammar it needs.
    for (let i = 0; i < 20 && !(await codeOf(named.id).isVisible()); i++) {
      await page.locator('.timeline').evaluate((el) => el.scrollTo(0, 0));
      await page.waitForTimeout(100);
    }
    await codeOf(named.id).locator('code[data-language="python"] .hljs-keyword').first().waitFor();
    expect(await codeOf(named.id).locator('.hljs-comment').textContent()).to.equal('# say hello');
    await codeOf(guessed.id).locator('code[data-language="javascript"] .hljs-title').first().waitFor();
    await codeOf(fromJson.id).locator('code[data-language="typescript"] .hljs-keyword').first().waitFor();
    expect(requested.some((p) => /\/highlight-/.test(p))).to.equal(true);
    expect(requested.some((p) => /\/python-/.test(p))).to.equal(true);
    // The text is unchanged (Copy copies it as written).
    expect(await codeOf(named.id).locator('code').textContent()).to.equal('def greet(name):\n    # say hello\n    return f"hello {name}"');
    await codeOf(named.id).scrollIntoViewIfNeeded();
    await screenshot(page, 'code-highlight');

    const problems: string[] = [];
    await axeAt(page, 'desktop light', problems);
    const dark = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`, { width: 390, height: 844 }, 'dark');
    const darkCode = dark.page.locator(`[data-message-id="${named.id}"] pre`);
    for (let i = 0; i < 20 && !(await darkCode.isVisible()); i++) {
      await dark.page.locator('.timeline').evaluate((el) => el.scrollTo(0, 0));
      await dark.page.waitForTimeout(100);
    }
    await darkCode.locator('.hljs-keyword').first().waitFor();
    await dark.page.locator(`[data-message-id="${fromJson.id}"] .hljs-keyword`).first().waitFor();
    // Dark colours are another palette than light ones.
    const keywordColour = (p: Page) => p.locator('.hljs-keyword').first().evaluate((el) => getComputedStyle(el).color);
    expect(await keywordColour(dark.page)).to.not.equal(await keywordColour(page));
    await screenshot(dark.page, 'code-highlight-phone-dark');
    await axeAt(dark.page, 'phone dark', problems);
    expect(problems, problems.join('\n')).to.deep.equal([]);
    app.assertClean();
    dark.assertClean();
  });

  it('shows the first page of a posted PDF, served still as an attachment that cannot run', async () => {
    const ws = await newWorkspace();
    const ch = await channelWith(ws);
    // A real PDF, printed by the browser itself.
    const printer = await b.browser.newPage();
    await printer.setContent('<h1 style="font: 48px sans-serif">Quarterly report</h1><p style="font: 24px sans-serif">Revenue grew in every region.</p>');
    const pdf = await printer.pdf({ format: 'A5' });
    await printer.close();
    const file = (await uploadFile(stack().url, { key: ws.ownerKey, data: pdf, name: 'report.pdf', type: 'application/pdf' })).body.data;
    await post(ws, ch.id, {
      content: 'Shared a file: report.pdf',
      metadata: { type: 'axid.file', data: { file_id: file.id, name: file.name, size: file.size, content_type: file.content_type } },
    });

    // The download stays an attachment in a sandbox, never a page of our origin.
    const info = await ws.owner.get(`/api/v1/files/${file.id}`);
    const link = new URL(info.body.data.download_url as string);
    const download = await fetch(`${stack().url}${link.pathname}${link.search}`);
    expect(download.headers.get('content-disposition')).to.match(/^attachment;/);
    expect(download.headers.get('content-security-policy')).to.match(/^sandbox;/);
    expect(download.headers.get('x-content-type-options')).to.equal('nosniff');

    const problems: string[] = [];
    for (const [viewport, scheme, tag] of [
      [{ width: 1280, height: 800 }, 'light', 'desktop'],
      [{ width: 390, height: 844 }, 'dark', 'phone-dark'],
    ] as const) {
      const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`, viewport, scheme);
      const page = app.page;
      const preview = page.getByRole('figure').filter({ has: page.getByRole('img', { name: 'First page of report.pdf' }) });
      await preview.and(page.locator('[data-pages="1"]')).waitFor();
      await preview.getByText('PDF, 1 page').waitFor();
      // The canvas holds the drawn page: dark pixels of the heading's text on white.
      const inked = await preview.locator('canvas').evaluate((c: HTMLCanvasElement) => {
        const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
        let dark = 0;
        for (let i = 0; i < px.length; i += 4) if (px[i]! < 100 && px[i + 1]! < 100 && px[i + 2]! < 100 && px[i + 3]! > 200) dark++;
        return dark;
      });
      expect(inked, 'dark pixels drawn').to.be.greaterThan(200);
      await page.getByRole('link', { name: /Download report\.pdf/ }).waitFor();
      await axeAt(page, tag, problems);
      await screenshot(page, `pdf-preview-${tag}`);
      app.assertClean();
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('is installable: a valid manifest, and a service worker that opens the app offline with its offline banner', async () => {
    const base = stack().url;
    const manifestRes = await fetch(`${base}/manifest.webmanifest`);
    expect(manifestRes.status).to.equal(200);
    expect(manifestRes.headers.get('content-type')).to.match(/^application\/manifest\+json/);
    expect(manifestRes.headers.get('cache-control')).to.equal('no-cache');
    const manifest = (await manifestRes.json()) as { name: string; start_url: string; display: string; theme_color: string; icons: { src: string; sizes: string; type: string; purpose?: string }[] };
    expect(manifest).to.include({ name: 'Axid', start_url: '/', display: 'standalone' });
    expect(manifest.theme_color).to.match(/^#[0-9a-f]{6}$/i);
    for (const size of ['192x192', '512x512']) expect(manifest.icons.some((i) => i.sizes === size && (i.purpose ?? 'any') === 'any'), size).to.equal(true);
    expect(manifest.icons.some((i) => i.purpose === 'maskable')).to.equal(true);
    for (const icon of manifest.icons) {
      const res = await fetch(new URL(icon.src, base));
      expect(res.headers.get('content-type'), icon.src).to.equal(icon.type);
      expect(pngSize(Buffer.from(await res.arrayBuffer())).join('x'), icon.src).to.equal(icon.sizes);
    }
    const swRes = await fetch(`${base}/sw.js`);
    expect(swRes.status).to.equal(200);
    expect(swRes.headers.get('content-type')).to.match(/^text\/javascript/);
    expect(swRes.headers.get('cache-control')).to.equal('no-cache');
    expect(swRes.headers.get('content-security-policy')).to.include("script-src 'self'");

    const ws = await newWorkspace();
    const ch = await channelWith(ws);
    await post(ws, ch.id, { content: 'written before the network went away' });
    const problems: string[] = [];
    for (const [viewport, scheme, tag] of [
      [{ width: 1280, height: 800 }, 'light', 'desktop'],
      [{ width: 390, height: 844 }, 'dark', 'phone-dark'],
    ] as const) {
      const app = await signedIn(b, base, ws.ownerKey, `/c/${ch.id}`, viewport, scheme);
      const page = app.page;
      await page.getByRole('article', { name: /written before the network went away$/ }).waitFor();
      // The page links the manifest, and the worker takes control of it once installed.
      expect(await page.locator('link[rel="manifest"]').getAttribute('href')).to.equal('/manifest.webmanifest');
      await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
      const cached = await page.evaluate(async () => {
        const urls: string[] = [];
        for (const name of await caches.keys()) for (const r of await (await caches.open(name)).keys()) urls.push(new URL(r.url).pathname);
        return urls;
      });
      expect(cached).to.include('/');
      expect(cached.some((u) => /^\/assets\/index-.*\.js$/.test(u))).to.equal(true);
      // Never the API nor its event stream.
      expect(cached.filter((u) => u.startsWith('/api/'))).to.deep.equal([]);

      await app.context.setOffline(true);
      // The page itself comes from the worker's cache.
      expect((await page.reload())?.fromServiceWorker()).to.equal(true);
      const banner = page.getByRole('status').filter({ hasText: 'You are offline' });
      await banner.waitFor();
      await screenshot(page, `offline-${tag}`);
      await axeAt(page, `offline ${tag}`, problems);
      // Back online: the app starts, at the conversation it was opened on.
      await app.context.setOffline(false);
      await page.getByRole('article', { name: /written before the network went away$/ }).waitFor();
      expect(await banner.count()).to.equal(0);
      app.assertClean();
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('offers a reload when a new build has taken over the open tab', async () => {
    const ws = await newWorkspace();
    const ch = await channelWith(ws);
    await post(ws, ch.id, { content: 'before the new build' });
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    await page.getByRole('article', { name: /before the new build$/ }).waitFor();
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    const notice = page.getByRole('status').filter({ hasText: 'A new version of Axid is ready' });
    expect(await notice.count()).to.equal(0);
    // A new build, as a deploy would bring: another sw.js (the server reads the build again when index.html changes).
    const sw = new URL('sw.js', DIST);
    const index = new URL('index.html', DIST);
    const original = readFileSync(sw);
    try {
      writeFileSync(sw, Buffer.concat([Buffer.from('const NEW_BUILD = 1;\n'), original]));
      utimesSync(index, new Date(), new Date(Date.now() + 1000));
      await page.evaluate(() => navigator.serviceWorker.getRegistration().then((r) => r?.update()));
      await notice.waitFor();
      await screenshot(page, 'update-ready');
      expect(await axeProblems(page)).to.deep.equal([]);
      await notice.getByRole('button', { name: 'Reload' }).click();
      await page.getByRole('article', { name: /before the new build$/ }).waitFor();
      expect(await notice.count()).to.equal(0);
    } finally {
      writeFileSync(sw, original);
      utimesSync(index, new Date(), new Date(Date.now() + 2000));
    }
    app.assertClean();
  });
});
