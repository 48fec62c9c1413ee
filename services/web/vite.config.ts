// Vite builds the app into dist/ (hashed files under dist/assets/), which
// services/api/web-app.ts serves at `/`. Preact stands in for React so that
// virtua's React adapter works at Preact's size.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const compat = 'preact/compat';

export default defineConfig({
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
