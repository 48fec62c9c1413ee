// Input rules checked before a request, as the API checks them
// (services/core/channels/channels.schemas.ts), so the reason shows while typing.

/** Length in characters as people count them (code points), as the API counts. */
const chars = (s: string) => [...s].length;

/** Why a channel name would be refused, or null. Names are kept exactly as given (no slugging). */
export function channelNameProblem(name: string): string | null {
  if (chars(name) < 1 || name.trim() === '') return 'A channel needs a name (not only spaces).';
  if (chars(name) > 80) return `A channel name is at most 80 characters (this one has ${chars(name)}).`;
  return null;
}

export function descriptionProblem(text: string): string | null {
  return chars(text) > 1000 ? `A description is at most 1000 characters (this one has ${chars(text)}).` : null;
}
