// Search helpers, framework-free (ui/search.tsx draws the results).

/** The words of a query to mark in results (phrases whole, excluded words left out). */
export function searchTerms(q: string): string[] {
  const terms: string[] = [];
  for (const m of q.matchAll(/(-?)"([^"]+)"|(-?)(\S+)/g)) {
    if (m[1] === '-' || m[3] === '-') continue;
    const t = (m[2] ?? m[4] ?? '').trim();
    if (t) terms.push(t);
  }
  return terms;
}
