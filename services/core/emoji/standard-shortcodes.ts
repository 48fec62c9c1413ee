// The standard shortcodes a custom emoji may not take: GitHub's and Slack's
// (iamcal) sets from emojibase-data, the data the web app renders `:name:` with.
import { createRequire } from 'node:module';

let codes: Set<string> | null = null;

export function isStandardShortcode(name: string): boolean {
  if (!codes) {
    const require = createRequire(import.meta.url);
    codes = new Set<string>();
    for (const file of ['emojibase-data/en/shortcodes/github.json', 'emojibase-data/en/shortcodes/iamcal.json']) {
      for (const value of Object.values(require(file) as Record<string, string | string[]>)) {
        for (const code of Array.isArray(value) ? value : [value]) codes.add(code);
      }
    }
  }
  return codes.has(name);
}
