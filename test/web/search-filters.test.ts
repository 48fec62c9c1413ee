// Search filters (lib/search-filters.ts), without a browser: what each filter
// maps to in GET /search/messages, and what is suggested while one is typed.
import { expect } from 'chai';
import { parseSearch, suggestionsAt } from '../../services/web/src/lib/search-filters.js';

const known = {
  users: [
    { id: 'u-alice', name: 'alice', display_name: 'Alice Martin' },
    { id: 'u-bob', name: 'bob', display_name: null },
  ],
  channels: [
    { id: 'c-infra', name: 'infra' },
    { id: 'c-random', name: 'random' },
  ],
  dms: [{ id: 'd-bob', otherId: 'u-bob' }],
};

describe('search filters', () => {
  it('maps from:, in:, before:, after: and has:file to the API parameters and keeps the words', () => {
    const parsed = parseSearch('deploy from:@alice in:#infra before:2026-02-01 after:2026-01-01 has:file "rolled back"', known);
    expect(parsed.text).to.equal('deploy "rolled back"');
    expect(parsed.problems).to.deep.equal([]);
    expect(parsed.params).to.deep.include({ author_id: 'u-alice', channel_id: 'c-infra', has: 'file' });
    // Days are local; before: is the day's start, after: its end (both exclusive).
    expect(new Date(parsed.params.before!).getTime()).to.equal(new Date(2026, 1, 1).getTime());
    expect(new Date(parsed.params.after!).getTime()).to.equal(new Date(2026, 0, 2).getTime() - 1);
    expect(parseSearch('in:@bob from:BOB', known).params).to.deep.equal({ channel_id: 'd-bob', author_id: 'u-bob' });
  });

  it('says what it cannot understand', () => {
    expect(parseSearch('from:@zed in:#nowhere before:2026-02-30 has:link x', known).problems).to.deep.equal([
      'No one is called @zed.',
      'No conversation is called #nowhere.',
      'before: takes a day, such as before:2026-01-31.',
      'has: takes file (has:file).',
    ]);
  });

  it('suggests people after from:, conversations after in:, and the filters for a word that begins one', () => {
    const q = 'deploy from:al';
    expect(suggestionsAt(q, q.length, known)).to.deep.equal({ start: 7, items: [{ insert: 'from:@alice ', label: 'Alice Martin (@alice)' }] });
    const inQ = 'in:';
    expect(suggestionsAt(inQ, 3, known)!.items.map((i) => i.insert)).to.deep.equal(['in:#infra ', 'in:#random ', 'in:@bob ']);
    expect(suggestionsAt('x ha', 4, known)!.items.map((i) => i.insert)).to.deep.equal(['has:file ']);
    // Typed in full: nothing more to suggest; after a space, nothing at all.
    expect(suggestionsAt('has:file', 8, known)!.items).to.deep.equal([]);
    expect(suggestionsAt('from:@alice ', 12, known)).to.equal(null);
  });
});
