// A posted PDF's first page as a thumbnail under its message, drawn by pdf.js
// (lib/pdf-preview.ts) once the attachment is on screen. Only files on this
// server's origin are previewed (the CSP's `connect-src 'self'`: a real S3's
// links are another origin); any failure leaves the plain attachment.
import { useEffect, useRef, useState } from 'preact/hooks';
import { whenVisible } from './when-visible.js';

/** Larger files are not fetched just to be previewed. */
const MAX_PREVIEW_BYTES = 20 * 1024 * 1024;
/** The thumbnail's width in CSS pixels (media.css sizes the canvas to it). */
const WIDTH = 220;

export function PdfPreview({ href, name, size }: { href: string; name: string; size: number | null }) {
  const box = useRef<HTMLElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [pages, setPages] = useState<number | null>(null);
  const [failed, setFailed] = useState(false);
  const eligible = new URL(href, location.href).origin === location.origin && (size === null || size <= MAX_PREVIEW_BYTES);
  // A new signed link for the same file must not draw it again.
  const file = href.split('?')[0];
  useEffect(() => {
    if (!eligible) return;
    let live = true;
    const stop = whenVisible(box.current!, () => {
      const bytes = fetch(href).then((r) => (r.ok ? r.arrayBuffer() : Promise.reject(new Error(`download ${r.status}`))));
      void Promise.all([bytes, import('../lib/pdf-preview.js')])
        .then(([b, pdf]) => (live ? pdf.drawFirstPage(b, canvas.current!, WIDTH) : null))
        .then((n) => live && n !== null && setPages(n), () => live && setFailed(true));
    });
    return () => ((live = false), stop());
  }, [file, eligible]);
  if (!eligible || failed) return null;
  return (
    <figure ref={box} class={`pdf-preview${pages === null ? ' loading' : ''}`} data-pages={pages ?? undefined}>
      <canvas ref={canvas} role="img" aria-label={`First page of ${name}`} />
      <figcaption class="muted">{pages === null ? 'Preview loading…' : `PDF, ${pages} ${pages === 1 ? 'page' : 'pages'}`}</figcaption>
    </figure>
  );
}
