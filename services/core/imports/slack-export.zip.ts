// Reads a Slack export ZIP entry by entry (yauzl): the central directory is
// listed first, then each entry is opened on its own when it is needed, so
// the export is never whole in memory whatever its size. An entry is read
// whole (a day of one conversation, a metadata file): bounded below.
import yauzl from 'yauzl';
import type { Readable } from 'node:stream';
import { AppError } from '../../../shared/errors.js';

/** A single JSON entry larger than this is refused (a day of one conversation is far below it). */
export const MAX_JSON_ENTRY_BYTES = 256 * 1024 * 1024;

/** A broken or unreadable export: the message names the file. */
export class BadExport extends AppError {
  constructor(message: string) {
    super('validation_error', message);
  }
}

export class SlackZip {
  private constructor(
    private readonly zip: yauzl.ZipFile,
    /** Every entry by its path inside the ZIP (directories left out). */
    readonly entries: Map<string, yauzl.Entry>,
  ) {}

  static async open(path: string): Promise<SlackZip> {
    const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.open(path, { lazyEntries: true, autoClose: false, strictFileNames: false, validateEntrySizes: true }, (err, z) =>
        err ? reject(new BadExport(`${basename(path)}: is not a readable ZIP archive (${err.message})`)) : resolve(z!),
      ),
    );
    const entries = new Map<string, yauzl.Entry>();
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!entry.fileName.endsWith('/')) entries.set(entry.fileName, entry);
        zip.readEntry();
      });
      zip.on('end', () => resolve());
      zip.on('error', (err: Error) => reject(new BadExport(`${basename(path)}: the ZIP archive is damaged (${err.message})`)));
      zip.readEntry();
    });
    return new SlackZip(zip, entries);
  }

  has(name: string) {
    return this.entries.has(name);
  }

  /** The entry's bytes as a stream (its CRC and size are checked as it is read). */
  async stream(name: string): Promise<Readable> {
    const entry = this.entries.get(name);
    if (!entry) throw new BadExport(`${name}: is not in the export`);
    return new Promise<Readable>((resolve, reject) =>
      this.zip.openReadStream(entry, (err, stream) => (err ? reject(new BadExport(`${name}: cannot be read from the ZIP (${err.message})`)) : resolve(stream!))),
    );
  }

  /** The entry parsed as JSON; a damaged entry or bad JSON fails naming it. */
  async json(name: string): Promise<unknown> {
    const entry = this.entries.get(name);
    if (!entry) throw new BadExport(`${name}: is not in the export`);
    if (entry.uncompressedSize > MAX_JSON_ENTRY_BYTES) throw new BadExport(`${name}: larger than ${MAX_JSON_ENTRY_BYTES} bytes`);
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of await this.stream(name)) chunks.push(chunk as Buffer);
    } catch (err) {
      throw err instanceof BadExport ? err : new BadExport(`${name}: cannot be read from the ZIP (${(err as Error).message})`);
    }
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch (err) {
      throw new BadExport(`${name}: is not valid JSON (${(err as Error).message})`);
    }
  }

  /** The entry as JSON if it exists, else `fallback` (metadata files an export may leave out). */
  async jsonOr(name: string, fallback: unknown): Promise<unknown> {
    return this.has(name) ? this.json(name) : fallback;
  }

  close() {
    this.zip.close();
  }
}

const basename = (p: string) => p.split(/[\\/]/).pop() ?? p;
