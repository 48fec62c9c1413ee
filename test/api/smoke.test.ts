import { expect } from 'chai';
import { newWorkspace } from '../support/stack.js';

describe('smoke', () => {
  it('answers /users/me for the owner', async () => {
    const ws = await newWorkspace();
    const res = await ws.owner.get('/api/v1/users/me');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.role).to.equal('owner');
  });
});
