// An image at full size in a dialog (Escape, the close button or a click
// outside closes it), with a link to the original.
import { Dialog } from './dialog.js';

export function Lightbox({ src, alt, onClose }: { src: string; alt: string; onClose(): void }) {
  return (
    <Dialog title={alt || 'Image'} onClose={onClose} class="lightbox">
      <img src={src} alt={alt} referrerpolicy="no-referrer" />
      <div class="row">
        <a class="btn small" href={src} target="_blank" rel="noopener noreferrer">Open original</a>
        <button type="button" class="btn small" data-autofocus onClick={onClose}>Close</button>
      </div>
    </Dialog>
  );
}
