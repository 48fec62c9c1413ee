// WAL positions as the read routing compares them (shared/db/read-replicas.ts).
import { expect } from 'chai';
import { parseLsn } from '../../shared/db/read-replicas.js';

describe('read replicas: WAL positions', () => {
  it('reads an LSN as one number, high and low words', () => {
    expect(parseLsn('0/0')).to.equal(0n);
    expect(parseLsn('16/B374D848')).to.equal((0x16n << 32n) | 0xb374d848n);
    expect(parseLsn('FFFFFFFF/FFFFFFFF')).to.equal(0xffffffffffffffffn);
  });

  it('orders positions across the low word rolling over', () => {
    expect(parseLsn('1/0')! > parseLsn('0/FFFFFFFF')!).to.equal(true);
    expect(parseLsn('A/10')! > parseLsn('9/FFFFFFF0')!).to.equal(true);
  });

  it('gives null for no position (a server not in recovery)', () => {
    expect(parseLsn(null)).to.equal(null);
    expect(parseLsn(undefined)).to.equal(null);
    expect(parseLsn('')).to.equal(null);
  });
});
