// The first page of a posted PDF drawn into a canvas: pdf.js (Mozilla's
// pdfjs-dist), imported only when a PDF attachment is on screen
// (ui/pdf-preview.tsx). The file is parsed in pdf.js's worker, served from
// /assets/ like the app's other scripts; scripts inside a PDF never run
// (pdf.js has no scripting unless a viewer adds its sandbox, and the app's CSP
// forbids eval, which `isEvalSupported: false` stops pdf.js asking for). The
// bytes come from the file's signed link, still an attachment: nothing is
// ever rendered by the browser from our origin.
import { getDocument, GlobalWorkerOptions } from 'pdfjs-dist';
import workerUrl from 'pdfjs-dist/build/pdf.worker.min.mjs?url';

GlobalWorkerOptions.workerSrc = workerUrl;

/** Draws page 1 of `bytes` into `canvas`, `width` CSS pixels wide; resolves with the number of pages. */
export async function drawFirstPage(bytes: ArrayBuffer, canvas: HTMLCanvasElement, width: number): Promise<number> {
  const task = getDocument({
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    enableXfa: false,
    // Glyphs drawn as paths, not fonts added to the document: nothing of the file reaches the page's fonts.
    disableFontFace: true,
    stopAtErrors: false,
  });
  try {
    const doc = await task.promise;
    const page = await doc.getPage(1);
    const scale = width / page.getViewport({ scale: 1 }).width;
    const viewport = page.getViewport({ scale: scale * Math.min(window.devicePixelRatio || 1, 2) });
    canvas.width = Math.floor(viewport.width);
    canvas.height = Math.floor(viewport.height);
    await page.render({ canvas, viewport }).promise;
    return doc.numPages;
  } finally {
    await task.destroy();
  }
}
