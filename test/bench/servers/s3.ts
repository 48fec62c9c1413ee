// The S3-compatible store both sides of scenario 6 write to (the stack runs
// with S3_ENDPOINT pointing here).
import S3rver from 's3rver';

const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory: process.env.S3_DIR!,
  configureBuckets: [{ name: process.env.S3_BUCKET ?? 'axid-files' }],
});
const address = (await server.run()) as { port: number };
console.log(`listening ${address.port}`);
