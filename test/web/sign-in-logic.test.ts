// The web app's reading of sign-in links (services/web/src/lib/sign-in.ts), without a browser.
import { expect } from 'chai';
import { arrivalFromHash, signInErrorText } from '../../services/web/src/lib/sign-in.js';

describe('sign-in: link fragments in the web app', () => {
  it('reads what a link asks for', () => {
    expect(arrivalFromHash('#invite=abc')).to.deep.equal({ kind: 'invite', token: 'abc', email: '' });
    expect(arrivalFromHash('#invite=abc&email=a%2Bb%40example.com')).to.deep.equal({ kind: 'invite', token: 'abc', email: 'a+b@example.com' });
    expect(arrivalFromHash('#code=c0de')).to.deep.equal({ kind: 'code', code: 'c0de' });
    expect(arrivalFromHash('#reset=r')).to.deep.equal({ kind: 'reset', code: 'r' });
    expect(arrivalFromHash('#key=axid_k')).to.deep.equal({ kind: 'key', key: 'axid_k' });
    expect(arrivalFromHash('#sign_in_error=no_account')).to.deep.equal({ kind: 'error', code: 'no_account' });
    for (const none of ['', '#', '#code=', '#other=1', '#code=%20']) expect(arrivalFromHash(none), none).to.deep.equal({ kind: 'none' });
  });

  it('explains every single sign-on failure, and an unknown one in general words', () => {
    for (const code of ['sso_not_configured', 'sso_unavailable', 'sso_state', 'sso_failed', 'email_unverified', 'email_unsupported', 'no_account', 'user_limit_reached']) {
      expect(signInErrorText(code), code).to.not.equal(signInErrorText('something-else'));
    }
    expect(signInErrorText('<script>')).to.equal('Signing in did not complete. Try again.');
  });
});
