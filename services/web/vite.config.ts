// Vite builds the app into dist/ (hashed files under dist/assets/), which
// services/api/web-app.ts serves at `/`. Preact stands in for React so that
// virtua's React adapter works at Preact's size.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const compat = 'preact/compat';

/** Files of public/ that the installed app needs offline (the manifest and its icons). */
const PUBLIC_SHELL = ['/manifest.webmanifest', '/favicon.svg', '/icon-192.png', '/icon-512.png', '/icon-maskable-512.png'];

/**
 * Writes dist/sw.js: service-worker.js after VERSION (a hash of what it
 * caches, so each build that changes the app is a new worker) and SHELL (the
 * page, its entry script and styles with what they import at once, and
 * PUBLIC_SHELL). Lazily loaded chunks are not listed: the worker keeps them
 * when the app first loads them.
 */
function indexHtml(bundle: Parameters<NonNullable<Extract<Plugin['generateBundle'], Function>>>[1]): string {
  const page = bundle['index.html'];
  return page?.type === 'asset' ? String(page.source) : '';
}

function serviceWorker(): Plugin {
  return {
    name: 'axid-service-worker',
    apply: 'build',
    // After Vite's own HTML step, so index.html is in the bundle and in the hash.
    enforce: 'post',
    generateBundle(_options, bundle) {
      const files = new Set<string>();
      const visit = (name: string) => {
        const chunk = bundle[name];
        if (!chunk || chunk.type !== 'chunk' || files.has(name)) return;
        files.add(name);
        for (const css of chunk.viteMetadata?.importedCss ?? []) files.add(css);
        chunk.imports.forEach(visit);
      };
      for (const chunk of Object.values(bundle)) if (chunk.type === 'chunk' && chunk.isEntry) visit(chunk.fileName);
      const source = readFileSync(new URL('./service-worker.js', import.meta.url), 'utf8');
      const shell = ['/', ...[...files].sort().map((f) => `/${f}`), ...PUBLIC_SHELL];
      const version = createHash('sha256').update(JSON.stringify(shell)).update(source).update(indexHtml(bundle)).update(readFileSync(new URL('./public/manifest.webmanifest', import.meta.url))).digest('hex').slice(0, 16);
      this.emitFile({ type: 'asset', fileName: 'sw.js', source: `const VERSION = ${JSON.stringify(version)};\nconst SHELL = ${JSON.stringify(shell)};\n${source}` });
    },
  };
}

export default defineConfig({
  plugins: [serviceWorker()],
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  resolve: {
    alias: [
      { find: /^react-dom$/, replacement: compat },
      { find: /^react$/, replacement: compat },
      { find: /^react\/jsx-runtime$/, replacement: 'preact/jsx-runtime' },
    ],
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline scripts or styles: the CSP allows 'self' only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    // The emoji data (lib/emoji.ts) is one lazily loaded chunk of about 570 KB (87 KB gzipped), never in the first load.
    chunkSizeWarningLimit: 700,
    rollupOptions: {
      // virtua marks itself "use client" for React Server Components; meaningless in this bundle.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
});
