// Pure parts of sign-in (docs/security.md): password hashes, the single
// sign-on settings, who sees an email (the web app's fragments: test/web/sign-in-logic.test.ts).
import { expect } from 'chai';
import { loadConfig } from '../../shared/config.js';
import { Password, dummyHash, hashPassword, verifyPassword } from '../../services/core/auth/passwords.js';
import { canSeeEmail } from '../../services/core/users/users.policy.js';

describe('sign-in: password hashes', () => {
  it('verifies the password it hashed and nothing else, with its parameters stored', async () => {
    const stored = await hashPassword('correct horse battery', 1024);
    expect(stored).to.match(/^\$scrypt\$ln=10,r=8,p=2\$/);
    expect(await verifyPassword('correct horse battery', stored)).to.equal(true);
    expect(await verifyPassword('correct horse batterY', stored)).to.equal(false);
    // Salted: the same password hashes differently.
    expect(await hashPassword('correct horse battery', 1024)).to.not.equal(stored);
    // A hash made with other parameters still verifies (its own are stored).
    expect(await verifyPassword('x'.repeat(12), await hashPassword('x'.repeat(12), 2048))).to.equal(true);
  });

  it('never matches a stored value that is not its own format', async () => {
    for (const stored of ['', 'plain text', '$argon2id$v=19$m=1,t=1,p=1$abc$def', '$scrypt$ln=99,r=8,p=2$AAAA$BBBB', '$scrypt$ln=10,r=8,p=2$AAAA']) {
      expect(await verifyPassword('anything at all', stored).catch(() => false), stored).to.equal(false);
    }
  });

  it('compares Unicode passwords in one normal form', async () => {
    const stored = await hashPassword('caf\u00e9 au lait long', 1024);
    expect(await verifyPassword('cafe\u0301 au lait long', stored)).to.equal(true);
  });

  it('makes one dummy hash per cost, reused', async () => {
    expect(await dummyHash(1024)).to.equal(await dummyHash(1024));
    expect(await dummyHash(1024)).to.match(/^\$scrypt\$ln=10,/);
  });

  it('takes 12 to 256 characters', () => {
    expect(Password.safeParse('a'.repeat(11)).success).to.equal(false);
    expect(Password.safeParse('a'.repeat(12)).success).to.equal(true);
    expect(Password.safeParse('a'.repeat(256)).success).to.equal(true);
    expect(Password.safeParse('a'.repeat(257)).success).to.equal(false);
  });
});

describe('sign-in: configuration', () => {
  it('turns single sign-on on with its three settings, and refuses one or two of them', () => {
    expect(loadConfig({}).oidc).to.equal(null);
    const on = loadConfig({ OIDC_ISSUER: 'https://id.example.com/realms/a', OIDC_CLIENT_ID: 'axid', OIDC_CLIENT_SECRET: 's' }).oidc;
    expect(on).to.deep.equal({ issuer: 'https://id.example.com/realms/a', clientId: 'axid', clientSecret: 's', name: 'id.example.com', autoCreate: false });
    expect(() => loadConfig({ OIDC_ISSUER: 'https://id.example.com' })).to.throw(/OIDC_CLIENT_ID[^\n]*\n[^\n]*OIDC_CLIENT_SECRET|OIDC_CLIENT_SECRET[^\n]*\n[^\n]*OIDC_CLIENT_ID/);
    expect(() => loadConfig({ OIDC_CLIENT_SECRET: 's', OIDC_CLIENT_ID: 'x' })).to.throw(/OIDC_ISSUER/);
    expect(() => loadConfig({ OIDC_ISSUER: 'ftp://x', OIDC_CLIENT_ID: 'a', OIDC_CLIENT_SECRET: 'b' })).to.throw(/OIDC_ISSUER/);
  });

  it('takes a power of two for PASSWORD_SCRYPT_N', () => {
    expect(loadConfig({}).passwordScryptN).to.equal(65536);
    expect(loadConfig({ PASSWORD_SCRYPT_N: '16384' }).passwordScryptN).to.equal(16384);
    for (const bad of ['1000', '512', '4194304', 'lots']) expect(() => loadConfig({ PASSWORD_SCRYPT_N: bad }), bad).to.throw(/PASSWORD_SCRYPT_N/);
  });
});

describe('sign-in: who sees an email', () => {
  it('the person and owners and admins', () => {
    expect(canSeeEmail({ userId: 'a', role: 'member' }, 'a')).to.equal(true);
    expect(canSeeEmail({ userId: 'a', role: 'member' }, 'b')).to.equal(false);
    expect(canSeeEmail({ userId: 'a', role: 'admin' }, 'b')).to.equal(true);
    expect(canSeeEmail({ userId: 'a', role: 'owner' }, 'b')).to.equal(true);
  });
});
