// The emoji picker: a dialog named "Emoji" with its own searchbox, recently
// used emoji first, then the whole Unicode set by group (lib/emoji.ts loads
// the data on first open).
import { useEffect, useState } from 'preact/hooks';
import { GROUPS, loadEmoji, noteRecentEmoji, recentEmoji, searchEmoji, type EmojiEntry } from '../lib/emoji.js';
import { useClient } from './context.js';
import { Dialog } from './dialog.js';
import { customEmojiSrc } from '../lib/custom-emoji.js';
import { CustomEmojiImage } from './emoji-glyph.js';

export function EmojiPicker({ onPick, onClose }: { onPick(e: EmojiEntry): void; onClose(): void }) {
  const client = useClient();
  const [list, setList] = useState<EmojiEntry[] | null>(null);
  const [failed, setFailed] = useState(false);
  const [q, setQ] = useState('');
  useEffect(() => void loadEmoji().then((d) => setList(d.list), () => setFailed(true)), []);
  const pick = (e: EmojiEntry) => {
    noteRecentEmoji(client.storage, e.unicode);
    onClose();
    onPick(e);
  };
  const recent = list ? recentEmoji(client.storage).map((u) => list.find((e) => e.unicode === u)).filter((e): e is EmojiEntry => Boolean(e)) : [];
  const found = list ? searchEmoji(list, q, q ? 200 : list.length) : [];
  // Level 3: the workspace's own emoji, picked as `:name:` (text) or `name` (a reaction), first in a search.
  const custom = client.store.team.emoji
    .filter((e) => customEmojiSrc(e.name) && e.name.includes(q.toLowerCase().trim().replace(/^:|:$/g, '')))
    .map((e): EmojiEntry => ({ unicode: `:${e.name}:`, label: e.name, shortcodes: [e.name], tags: [], group: -1 }));
  const customButton = (e: EmojiEntry) => (
    <button key={`c${e.label}`} type="button" class="emoji-cell" aria-label={e.label} title={e.unicode} onClick={() => pick(e)}>
      <CustomEmojiImage name={e.label} src={customEmojiSrc(e.label)!} />
    </button>
  );
  const button = (e: EmojiEntry, section: string) => (
    <button key={`${section}${e.unicode}`} type="button" class="emoji-cell" aria-label={e.label} title={e.shortcodes.length ? `:${e.shortcodes[0]}:` : e.label} onClick={() => pick(e)}>
      {e.unicode}
    </button>
  );
  return (
    <Dialog title="Emoji" onClose={onClose} class="emoji-dialog">
      <input type="search" data-autofocus aria-label="Search emoji" placeholder="Search emoji" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
      <div class="emoji-scroll">
        {failed ? <p class="error" role="alert">The emoji could not be loaded. Check the connection and try again.</p> : null}
        {!list && !failed ? <div class="skeleton-grid" aria-label="Loading emoji" role="status" /> : null}
        {custom.length ? (
          <section aria-label="Custom">
            <h3>Custom</h3>
            <div class="emoji-grid">{custom.map(customButton)}</div>
          </section>
        ) : null}
        {list && !q && recent.length ? (
          <section aria-label="Recently used">
            <h3>Recently used</h3>
            <div class="emoji-grid">{recent.map((e) => button(e, 'r'))}</div>
          </section>
        ) : null}
        {list && q ? (
          found.length ? <div class="emoji-grid" role="group" aria-label="Results">{found.map((e) => button(e, 's'))}</div> : custom.length ? null : <p class="muted">No emoji matches “{q}”.</p>
        ) : null}
        {list && !q
          ? GROUPS.map((g, i) => {
              const items = found.filter((e) => e.group === i);
              return items.length ? (
                <section key={g} aria-label={g}>
                  <h3>{g}</h3>
                  <div class="emoji-grid">{items.map((e) => button(e, 'g'))}</div>
                </section>
              ) : null;
            })
          : null}
      </div>
    </Dialog>
  );
}
