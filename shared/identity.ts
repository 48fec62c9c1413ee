// One identity normaliser (issue 33; docs/security.md, "One identity"): the
// one function that turns an email address as typed (a sign-in form, an
// invite, an admin's edit, a single sign-on claim) into the key it is stored
// under (users.email_key), looked up by, counted by (failed sign-ins) and
// matched by (single sign-on). SQL compares that stored key by equality and
// never folds case itself: JavaScript's toLowerCase and PostgreSQL's lower()
// fold some letters differently (a dotted capital I, among others), and two
// folds are two identities.
//
// The key is the address trimmed, in NFKC, each code point lowercased on its
// own (Unicode's default, locale-free mapping). The only spellings merged are
// ones that differ in case. An address is refused (undefined: 400
// validation_error where it is typed) when that cannot be done safely:
// - NFKC changes it (compatibility characters: a Kelvin sign, fullwidth
//   letters, ligatures, a long s; or a decomposed accent): merging those
//   would let an address another system keeps apart (an identity provider's)
//   stand for ours;
// - a letter lowercases to more than one code point (a dotted capital I: some
//   folds give "i", some "i" with a combining dot);
// - the ways to fold case disagree: lowercase, uppercase then lowercase, each
//   with and without context (a final sigma, a sharp s that uppercases to
//   "SS", a dotless i that uppercases to "I").
// Every key is its own key (a fixed point), so a stored key can be looked up
// by the same function.

const lowerEach = (s: string) => Array.from(s, (c) => c.toLowerCase()).join('');
const upperEach = (s: string) => Array.from(s, (c) => c.toUpperCase()).join('');

/** The identity key of an email address, or undefined when it cannot be normalised safely. */
export function emailIdentity(raw: string): string | undefined {
  const typed = raw.trim();
  if (typed.length === 0 || typed.normalize('NFKC') !== typed) return undefined;
  const key = lowerEach(typed);
  if (Array.from(key).length !== Array.from(typed).length) return undefined;
  const readings = [typed.toLowerCase(), typed.toUpperCase().toLowerCase(), lowerEach(upperEach(typed)), lowerEach(typed.toUpperCase()), lowerEach(key), key.toUpperCase().toLowerCase()];
  if (readings.some((r) => r !== key) || key.normalize('NFKC') !== key) return undefined;
  return key;
}

/** The message of the 400 an address that cannot be normalised gets. */
export const UNSAFE_EMAIL = 'is not an address this server can compare safely: it holds compatibility characters, or letters whose case folds differently by rule (such as a dotted capital I, a sharp s or a final sigma)';
