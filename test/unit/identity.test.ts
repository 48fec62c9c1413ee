// The one identity normaliser (shared/identity.ts; docs/security.md, "One
// identity"), over every code point: whatever it accepts is a fixed point,
// holds no character NFKC would merge with another, and every spelling of it
// that differs only in case (by any of the case mappings) is either refused
// or the same identity. Through the stack, with PostgreSQL's folds and single
// sign-on: test/api/identity.test.ts.
import { expect } from 'chai';
import { emailIdentity } from '../../shared/identity.js';

const lowerEach = (s: string) => Array.from(s, (c) => c.toLowerCase()).join('');
const upperEach = (s: string) => Array.from(s, (c) => c.toUpperCase()).join('');

/** Every spelling of `s` a case mapping or a normalisation gives. */
const spellingsOf = (s: string) =>
  [s, s.toLowerCase(), s.toUpperCase(), lowerEach(s), upperEach(s), s.toUpperCase().toLowerCase(), s.toLowerCase().toUpperCase(), s.normalize('NFKC'), s.normalize('NFC'), s.normalize('NFD'), lowerEach(s.normalize('NFKC'))];

function* codePoints() {
  for (let cp = 0; cp <= 0x10ffff; cp++) if (cp < 0xd800 || cp > 0xdfff) yield String.fromCodePoint(cp);
}

describe('emailIdentity (the one identity normaliser)', () => {
  it('folds ASCII case and trims, and nothing else of an ASCII address', () => {
    expect(emailIdentity('  Kate.Smith@Corp.EXAMPLE ')).to.equal('kate.smith@corp.example');
    expect(emailIdentity('kate@corp.example')).to.equal('kate@corp.example');
    expect(emailIdentity('   ')).to.equal(undefined);
  });

  it('refuses what folds differently by rule or merges with another address', () => {
    for (const unsafe of ['İnfo@x.test', 'ınfo@x.test', '\u212Aate@x.test', 'ｋate@x.test', 'ſam@x.test', 'straße@x.test', 'ΟΔΟΣ@x.test', 'e\u0301ric@x.test', 'ﬁn@x.test', '𝐚@x.test']) {
      expect(emailIdentity(unsafe), unsafe).to.equal(undefined);
    }
  });

  it('over every code point with a case mapping or a normalisation, in the middle and at the end of a local part: accepted means a fixed point with one identity for every spelling', function () {
    this.timeout(60_000);
    let accepted = 0;
    let refused = 0;
    for (const c of codePoints()) {
      // A code point no mapping changes has no other spelling: nothing to compare.
      if (c.toLowerCase() === c && c.toUpperCase() === c && c.normalize('NFKC') === c && c.normalize('NFD') === c) continue;
      for (const s of [`a${c}b@example.test`, `ab${c}@example.test`]) {
        const key = emailIdentity(s);
        if (key === undefined) {
          refused++;
          continue;
        }
        accepted++;
        const at = `U+${c.codePointAt(0)!.toString(16)}`;
        expect(emailIdentity(key), `fixed point of ${at}`).to.equal(key);
        expect(key.normalize('NFKC'), `${at}: nothing NFKC merges`).to.equal(key);
        expect(s.normalize('NFKC'), `${at}: accepted only as NFKC`).to.equal(s);
        for (const v of spellingsOf(s)) {
          const other = emailIdentity(v);
          if (other !== undefined) expect(other, `${at} spelled ${JSON.stringify(v)}`).to.equal(key);
        }
      }
    }
    // Most letters with case are accepted (Latin, Greek, Cyrillic, Armenian, ...); compatibility characters are not.
    expect(accepted).to.be.greaterThan(2_000);
    expect(refused).to.be.greaterThan(5_000);
  });
});
