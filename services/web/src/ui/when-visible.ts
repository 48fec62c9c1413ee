// Work that waits until an element is on screen (code colours, PDF previews):
// one IntersectionObserver for all of them. It sees what is visible inside the
// scrolled timeline, not merely what the virtual list keeps in the DOM.
const waiting = new WeakMap<Element, () => void>();
let observer: IntersectionObserver | null = null;

/** Calls `then` once, the first time `el` is on screen; the answer cancels the wait. */
export function whenVisible(el: Element, then: () => void): () => void {
  observer ??= new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (!e.isIntersecting) continue;
      observer!.unobserve(e.target);
      const run = waiting.get(e.target);
      waiting.delete(e.target);
      run?.();
    }
  });
  waiting.set(el, then);
  observer.observe(el);
  return () => (observer!.unobserve(el), waiting.delete(el));
}
