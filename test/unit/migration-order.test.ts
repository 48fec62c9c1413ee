// Migrations run in the order of migrations/index.ts: that order must be their
// names' order, or a database migrated in another order than a fresh one ends
// up different (parallel branches each append theirs at the end).
import { expect } from 'chai';
import { migrations } from '../../shared/db/migrations/index.js';

describe('migration order', () => {
  it('lists the migrations in the order of their names, each once', () => {
    const names = Object.keys(migrations);
    expect(names).to.deep.equal([...new Set(names)].sort());
  });
});
