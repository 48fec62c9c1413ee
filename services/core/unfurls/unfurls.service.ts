// Link previews (contract §14, level 3): a post or an edit whose content has
// links records a `message.unfurl` job in its transaction (job outbox); the
// worker fetches the pages (unfurls.jobs.ts) and writes `unfurls`, then
// message.updated. A message without a link costs a substring look, no parse
// and no transaction more.
import type { JobPayloads } from '../../../shared/jobs.js';
import type { Runtime } from '../../../shared/runtime.js';
import { linksKey, linksToUnfurl } from './unfurls.links.js';

/** The preview job a message with this content needs; null at level 2 or without a link to preview. */
export function unfurlJob(rt: Runtime, messageId: string, content: string): JobPayloads['message.unfurl'] | null {
  if (!rt.presenters.unfurls) return null;
  const links = linksToUnfurl(content, rt.config.unfurls.allowPrivate);
  return links.length === 0 ? null : { messageId, linksKey: linksKey(links) };
}

/** The links an edit's content previews, to compare with the ones the message had. */
export const unfurlLinks = (rt: Runtime, content: string) => linksToUnfurl(content, rt.config.unfurls.allowPrivate);
