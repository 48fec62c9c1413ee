// The one check every link and image address passes before it reaches the
// DOM: parsed with new URL(), only https: (and mailto: for links) survive.
export function safeUrl(raw: unknown, { allowMailto = true }: { allowMailto?: boolean } = {}): string | null {
  if (typeof raw !== 'string') return null;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return null;
  }
  if (url.protocol === 'https:' || (allowMailto && url.protocol === 'mailto:')) return url.href;
  return null;
}

/** Same-origin addresses (file downloads through this server) are fine too. */
export function safeImageUrl(raw: unknown, origin: string): string | null {
  if (typeof raw !== 'string') return null;
  try {
    const url = new URL(raw, origin);
    if (url.protocol === 'https:' || url.origin === origin) return url.href;
  } catch {
    return null;
  }
  return null;
}
