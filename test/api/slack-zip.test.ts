// The import's ZIP reading and the export's ZIP writing, on their own
// (services/core/imports/slack-export.zip.ts, zip-writer.ts).
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SlackZip } from '../../services/core/imports/slack-export.zip.js';
import { ZipWriter } from '../../services/core/imports/zip-writer.js';

describe('Slack export ZIPs', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'axid-zip-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes far more than it keeps (64 MB of entries that deflate to little), and reads them back entry by entry', async () => {
    const file = path.join(dir, 'big.zip');
    const zip = new ZipWriter(file);
    const day = Buffer.from(JSON.stringify(Array.from({ length: 4000 }, (_, i) => ({ type: 'message', text: 'same words again', ts: `1700000000.${i}` }))));
    let bytes = 0;
    let n = 0;
    while (bytes < 64 * 1024 * 1024) {
      await zip.addBuffer(`c/2024-01-${String(n++).padStart(4, '0')}.json`, day);
      bytes += day.length;
    }
    await zip.end();
    const read = await SlackZip.open(file);
    try {
      expect(read.entries.size).to.equal(n);
      expect(((await read.json('c/2024-01-0000.json')) as unknown[]).length).to.equal(4000);
    } finally {
      read.close();
    }
  });
});
