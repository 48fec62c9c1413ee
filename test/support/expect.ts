import { expect } from 'chai';
import type { Response } from './client.js';

/** Every error test checks status, code and the service headers. */
export function expectError(res: Response, status: number, code: string) {
  expect(res.status, `${res.status} ${res.text}`).to.equal(status);
  expect(res.body?.error?.code, res.text).to.equal(code);
  expect(res.body.error.message).to.be.a('string').and.not.empty;
  expect(res.headers.get('x-service-feature-level')).to.equal(res.expectedLevel ?? '2');
  expect(res.text).not.to.match(/\bat .+\.(ts|js):\d+|SELECT |INSERT |stack/i);
}

export function expectOk(res: Response, status = 200) {
  expect(res.status, `${res.status} ${res.text}`).to.equal(status);
  expect(res.headers.get('x-service-feature-level')).to.equal(res.expectedLevel ?? '2');
  return res.body;
}
