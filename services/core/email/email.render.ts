// The emails' text and HTML. Every value from users (names, message text,
// addresses) is escaped by escape-html, in element content and in quoted
// attributes alike.
import escapeHtml from 'escape-html';

export interface MissedMessage {
  author: string;
  conversation: string;
  text: string;
  permalink: string;
}

/** A message's text as an email shows it: at most 500 characters on one paragraph. */
const excerpt = (text: string) => {
  const chars = [...text.replace(/\s+/g, ' ').trim()];
  return chars.length > 500 ? `${chars.slice(0, 499).join('')}…` : chars.join('');
};

export function missedMessagesMail(o: { workspace: string; messages: MissedMessage[]; settingsUrl: string }) {
  const count = o.messages.length;
  const subject = `${count} new ${count === 1 ? 'message' : 'messages'} for you in ${o.workspace}`;
  const text = [
    `You were mentioned or sent a direct message in ${o.workspace} while you were away:`,
    '',
    ...o.messages.flatMap((m) => [`${m.author} in ${m.conversation}:`, excerpt(m.text), m.permalink, '']),
    `To stop these emails, use your mail app's Unsubscribe button, or set email notifications to "never" in your settings: ${o.settingsUrl}`,
  ].join('\n');
  const html = `<!doctype html><html><body>
<p>You were mentioned or sent a direct message in <strong>${escapeHtml(o.workspace)}</strong> while you were away:</p>
${o.messages
  .map(
    (m) => `<div style="margin:0 0 16px 0">
<p style="margin:0"><strong>${escapeHtml(m.author)}</strong> in ${escapeHtml(m.conversation)}</p>
<p style="margin:4px 0">${escapeHtml(excerpt(m.text))}</p>
<p style="margin:0"><a href="${escapeHtml(m.permalink)}">Open the message</a></p>
</div>`,
  )
  .join('\n')}
<p style="color:#666;font-size:12px">To stop these emails, use your mail app's Unsubscribe button, or set email notifications to &quot;never&quot; in your <a href="${escapeHtml(o.settingsUrl)}">settings</a>.</p>
</body></html>`;
  return { subject, text, html };
}

export function linkMail(o: { subject: string; intro: string; url: string; expiresAt: Date }) {
  const text = `${o.intro}\n\n${o.url}\n\nThe link works once, until ${o.expiresAt.toISOString()}.`;
  const html = `<!doctype html><html><body><p>${escapeHtml(o.intro)}</p><p><a href="${escapeHtml(o.url)}">${escapeHtml(o.url)}</a></p><p>The link works once, until ${escapeHtml(o.expiresAt.toISOString())}.</p></body></html>`;
  return { subject: o.subject, text, html };
}
