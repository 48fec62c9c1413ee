// `message.unfurl`, run by the worker: fetches the pages of a message's links
// through the one outbound fetcher (shared/http/outbound-fetch.ts: public
// addresses only unless UNFURL_ALLOW_PRIVATE, no redirect, 5 s, 1 MB, HTML
// only), reads each page's title, description, site name and image, copies
// the image into the workspace's storage, and writes `unfurls` with
// message.updated. A job whose links are no longer the message's (edited
// since) does nothing: the edit recorded its own.
import { OutboundFailed, OutboundRefused } from '../../../shared/http/outbound-fetch.js';
import type { JobHandler } from '../../../shared/jobs.js';
import type { Runtime } from '../../../shared/runtime.js';
import type { Unfurl } from '../messages/messages.presenter.js';
import { findMessageById } from '../messages/messages.store.js';
import { setUnfurls } from '../messages/messages.service.js';
import { MAX_PREVIEW_IMAGE_BYTES, PREVIEW_IMAGE_TYPES, storePreviewImage } from './unfurls.images.js';
import { linksKey, linksToUnfurl } from './unfurls.links.js';
import { readPage } from './unfurls.page.js';

const PAGE_TIMEOUT_MS = 5000;
const PAGE_MAX_BYTES = 1024 * 1024;

export const unfurlMessage: JobHandler<'message.unfurl'> = async (rt, { messageId, linksKey: key }) => {
  const message = await findMessageById(rt.db, messageId);
  if (!message) return;
  const links = linksToUnfurl(message.content, rt.config.unfurls.allowPrivate);
  if (links.length === 0 || linksKey(links) !== key) return;
  const owner = message.author_id ?? message.workspace_id;
  const unfurls: Unfurl[] = [];
  for (const link of links) {
    const unfurl = await unfurlLink(rt, message.workspace_id, owner, link);
    if (unfurl) unfurls.push(unfurl);
  }
  if (unfurls.length === 0) return;
  await rt.db.transaction((trx) => setUnfurls(rt, trx, messageId, message.content, unfurls));
};

/** One link's preview; null when the page cannot be had or says nothing of itself. */
async function unfurlLink(rt: Runtime, workspaceId: string, owner: string, link: string): Promise<Unfurl | null> {
  const allowPrivate = rt.config.unfurls.allowPrivate;
  const pageUrl = new URL(link);
  let html: string;
  try {
    const answer = await rt.outbound.fetch(pageUrl, { owner, allowPrivate, timeoutMs: PAGE_TIMEOUT_MS, maxBytes: PAGE_MAX_BYTES, contentTypes: ['text/html', 'application/xhtml+xml'], headers: { accept: 'text/html' } });
    // A redirect is an answer, not followed: no preview.
    if (answer.status !== 200) return null;
    html = answer.body.toString('utf8');
  } catch (err) {
    if (err instanceof OutboundRefused || err instanceof OutboundFailed) {
      rt.log.info({ host: pageUrl.hostname, reason: err.message }, 'link preview: page not fetched');
      return null;
    }
    throw err;
  }
  const page = readPage(html, pageUrl);
  if (!page.title && !page.description) return null;
  return { url: link, title: page.title, description: page.description, site_name: page.site_name, image_url: page.image ? await copyImage(rt, workspaceId, owner, page.image) : null };
}

/** The page's image in the workspace's storage; null when it cannot be had (the preview goes without it). */
async function copyImage(rt: Runtime, workspaceId: string, owner: string, image: string): Promise<string | null> {
  try {
    const answer = await rt.outbound.fetch(new URL(image), {
      owner,
      allowPrivate: rt.config.unfurls.allowPrivate,
      timeoutMs: PAGE_TIMEOUT_MS,
      maxBytes: MAX_PREVIEW_IMAGE_BYTES,
      oversize: 'refuse',
      contentTypes: PREVIEW_IMAGE_TYPES,
    });
    if (answer.status !== 200) return null;
    return await storePreviewImage(rt, workspaceId, answer.body);
  } catch (err) {
    if (err instanceof OutboundRefused || err instanceof OutboundFailed) {
      rt.log.info({ reason: err.message }, 'link preview: image not fetched');
      return null;
    }
    throw err;
  }
}
