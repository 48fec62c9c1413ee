// Password hashes: scrypt from node:crypto (docs/security.md says why), stored
// in PHC form with its parameters, `$scrypt$ln=16,r=8,p=2$<salt>$<hash>`, so
// hashes made with other parameters still verify after PASSWORD_SCRYPT_N
// changes. Comparison is constant-time; an unknown email is checked against a
// dummy hash made with the same parameters, so both answers take one hash.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { z } from 'zod';

const KEY_LENGTH = 32;
const BLOCK_SIZE = 8;
// OWASP's scrypt table: N=2^16, r=8, p=2 is as strong as N=2^17, r=8, p=1
// with half the memory (64 MiB per hash at the default N).
const PARALLELISM = 2;

/** What a password must be (contract §12): 12 to 256 characters. */
export const Password = z.string().min(12, 'must be at least 12 characters').max(256, 'must be at most 256 characters');

const derive = (password: string, salt: Buffer, o: { N: number; r: number; p: number }) =>
  new Promise<Buffer>((resolve, reject) => {
    const options: ScryptOptions = { N: o.N, r: o.r, p: o.p, maxmem: 128 * o.N * o.r * (o.p + 1) + 1024 * 1024 };
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });

export async function hashPassword(password: string, N: number): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N, r: BLOCK_SIZE, p: PARALLELISM });
  return `$scrypt$ln=${Math.log2(N)},r=${BLOCK_SIZE},p=${PARALLELISM}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

/** Whether `password` matches `stored`; a stored value that is not ours never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = PHC.exec(stored);
  if (!m) return false;
  const expected = Buffer.from(m[5]!, 'base64url');
  const key = await derive(password, Buffer.from(m[4]!, 'base64url'), { N: 2 ** Number(m[1]), r: Number(m[2]), p: Number(m[3]) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

const dummies = new Map<number, Promise<string>>();
/** A hash of a random password with today's parameters: what an unknown email is checked against. */
export const dummyHash = (N: number): Promise<string> => {
  let dummy = dummies.get(N);
  if (!dummy) dummies.set(N, (dummy = hashPassword(randomBytes(16).toString('hex'), N)));
  return dummy;
};
