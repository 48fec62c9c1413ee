// Medians, ratios and a small latency histogram that merges across processes.

export function median(xs: number[]): number {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Latencies in 0.1 ms buckets up to 60 s (anything slower lands in the last one). */
export class Histogram {
  static readonly BUCKET_MS = 0.1;
  static readonly SIZE = 600_001;
  private buckets = new Uint32Array(Histogram.SIZE);
  count = 0;
  max = 0;

  record(ms: number): void {
    const v = ms < 0 ? 0 : ms;
    const i = Math.min(Histogram.SIZE - 1, Math.round(v / Histogram.BUCKET_MS));
    this.buckets[i]!++;
    this.count++;
    if (v > this.max) this.max = v;
  }

  reset(): void {
    this.buckets.fill(0);
    this.count = 0;
    this.max = 0;
  }

  /** Non-empty buckets only: small enough to send over IPC. */
  toSparse(): [number, number][] {
    const out: [number, number][] = [];
    for (let i = 0; i < this.buckets.length; i++) if (this.buckets[i]) out.push([i, this.buckets[i]!]);
    return out;
  }

  static fromSparse(parts: [number, number][][]): Histogram {
    const h = new Histogram();
    for (const part of parts) {
      for (const [i, n] of part) {
        h.buckets[i]! += n;
        h.count += n;
        h.max = Math.max(h.max, i * Histogram.BUCKET_MS);
      }
    }
    return h;
  }

  percentile(p: number): number {
    if (this.count === 0) return NaN;
    const rank = Math.ceil((p / 100) * this.count);
    let seen = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      seen += this.buckets[i]!;
      if (seen >= rank) return i * Histogram.BUCKET_MS;
    }
    return this.max;
  }
}
