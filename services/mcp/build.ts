// Bundles the tool server, the shared validator, the SDK, zod and the starter
// templates into one ESM file, dist/axid-mcp.js, so the packed package runs
// with nothing but Node 20+. `npm run build` (in services/mcp) runs this.
import { build } from 'esbuild';
import { chmodSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readTemplateTree } from './src/template-files.js';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const outfile = here('./dist/axid-mcp.js');

await build({
  entryPoints: [here('./src/main.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  legalComments: 'none',
  // main.ts carries the shebang; CommonJS dependencies bundled into ESM may call require().
  banner: { js: "import { createRequire as __axidCreateRequire } from 'node:module'; const require = __axidCreateRequire(import.meta.url);" },
  plugins: [
    {
      name: 'inline-templates',
      setup(b) {
        // The templates are read from disk in development; the bundle carries them inline.
        b.onLoad({ filter: /[\\/]template-files\.ts$/ }, () => ({
          contents: `export const TEMPLATE_FILES = ${JSON.stringify(readTemplateTree(here('./templates/')))};`,
          loader: 'js',
        }));
      },
    },
  ],
  logLevel: 'warning',
});
chmodSync(outfile, 0o755);
process.stderr.write(`built ${outfile}\n`);
