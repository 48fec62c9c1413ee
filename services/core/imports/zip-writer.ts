// A ZIP written as it is made (yazl), with back-pressure: yazl keeps every
// entry it is given until its turn comes, so the writer waits once more than
// MAX_QUEUED entries are waiting. An entry's bytes are handed over only when
// yazl reaches it (addReadStreamLazy), which is also how the writer learns
// that the entries before it are written.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import yazl from 'yazl';

const MAX_QUEUED = 32;

export class ZipWriter {
  private readonly zip = new yazl.ZipFile();
  private readonly closed: Promise<unknown>;
  private queued = 0;
  private started = 0;
  private wake: (() => void) | null = null;
  private failed: Error | null = null;

  constructor(path: string, private readonly o: { compressionLevel?: number } = {}) {
    const out = createWriteStream(path);
    this.closed = once(out, 'close');
    this.zip.on('error', (err: Error) => (this.failed = err));
    out.on('error', (err) => (this.failed = err));
    this.zip.outputStream.pipe(out);
  }

  /** Adds an entry whose bytes `open` gives when its turn comes; resolves once few enough entries wait. */
  async add(name: string, open: () => Promise<Readable> | Readable) {
    if (this.failed) throw this.failed;
    this.queued++;
    this.zip.addReadStreamLazy(name, { mtime: new Date(), compressionLevel: this.o.compressionLevel ?? 6 }, (cb) => {
      this.started++;
      this.wake?.();
      Promise.resolve()
        .then(open)
        .then(
          (stream) => cb(null, stream),
          (err: Error) => cb(err, undefined as unknown as Readable),
        );
    });
    while (this.queued - this.started > MAX_QUEUED && !this.failed) await new Promise<void>((r) => (this.wake = r));
    if (this.failed) throw this.failed;
  }

  addBuffer(name: string, bytes: Buffer) {
    return this.add(name, () => Readable.from([bytes]));
  }

  addJson(name: string, value: unknown, indent?: number) {
    return this.addBuffer(name, Buffer.from(JSON.stringify(value, null, indent)));
  }

  async end() {
    this.zip.end();
    await this.closed;
    if (this.failed) throw this.failed;
  }
}
