// The starter-project templates, read from services/mcp/templates/ as text.
// The bundle (build.ts) replaces this module with the same map inlined, so the
// packed tool server needs no template files next to it.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const TEMPLATES_DIR = fileURLToPath(new URL('../templates/', import.meta.url));

/** Every file under `dir`, keyed by its path relative to `dir` with `/` separators. */
export function readTemplateTree(dir: string = TEMPLATES_DIR): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (sub: string) => {
    for (const entry of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else if (entry.isFile()) files[rel] = readFileSync(path.join(dir, rel), 'utf8');
    }
  };
  walk('');
  return Object.fromEntries(Object.entries(files).sort(([a], [b]) => a.localeCompare(b)));
}

export const TEMPLATE_FILES: Record<string, string> = readTemplateTree();
