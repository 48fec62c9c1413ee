// What Vite gives modules at build, typed (the app's tsconfig loads no `vite/client` types).

/** `?url` imports: the emitted file's address (pdf.js's worker, lib/pdf-preview.ts). */
declare module '*?url' {
  const url: string;
  export default url;
}

interface ImportMeta {
  /** `PROD`: a production build (the service worker registers only there). */
  readonly env: { readonly PROD: boolean };
}
