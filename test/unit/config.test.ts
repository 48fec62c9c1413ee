// The one configuration loader (shared/config.ts): no I/O.
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../shared/config.js';

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration: EMBEDDED and S3 credentials', () => {
  it('defaults EMBEDDED to auto (npm start) and accepts off', () => {
    expect(loadConfig({}).embedded).to.equal('auto');
    expect(loadConfig({ EMBEDDED: 'auto' }).embedded).to.equal('auto');
    expect(loadConfig({ EMBEDDED: 'off' }).embedded).to.equal('off');
  });

  it('refuses any other EMBEDDED value, naming the variable', () => {
    expect(configError({ EMBEDDED: 'no' })).to.match(/EMBEDDED: /);
    expect(configError({ EMBEDDED: 'on' })).to.match(/EMBEDDED: /);
  });

  it('refuses S3_ENDPOINT without credentials, naming each missing variable', () => {
    const both = configError({ S3_ENDPOINT: 'http://minio:9000' });
    expect(both).to.match(/S3_ACCESS_KEY_ID: .*S3_ENDPOINT/);
    expect(both).to.match(/S3_SECRET_ACCESS_KEY: .*S3_ENDPOINT/);
    const secret = configError({ S3_ENDPOINT: 'http://minio:9000', S3_ACCESS_KEY_ID: 'axid' });
    expect(secret).to.include('S3_SECRET_ACCESS_KEY').and.not.include('S3_ACCESS_KEY_ID:');
    const id = configError({ S3_ENDPOINT: 'http://minio:9000', S3_SECRET_ACCESS_KEY: 'secret' });
    expect(id).to.include('S3_ACCESS_KEY_ID').and.not.include('S3_SECRET_ACCESS_KEY:');
  });

  it('reports missing S3 credentials together with other bad values', () => {
    const message = configError({ S3_ENDPOINT: 'http://minio:9000', PORT: 'x', EMBEDDED: 'maybe' });
    for (const name of ['PORT', 'EMBEDDED', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY']) expect(message).to.include(`${name}: `);
  });

  it('uses the given credentials with S3_ENDPOINT, and the embedded server\'s only without it', () => {
    const real = loadConfig({ S3_ENDPOINT: 'http://minio:9000', S3_ACCESS_KEY_ID: 'axid', S3_SECRET_ACCESS_KEY: 'secret' });
    expect(real.s3).to.include({ endpoint: 'http://minio:9000', accessKeyId: 'axid', secretAccessKey: 'secret' });
    const embedded = loadConfig({});
    expect(embedded.s3).to.include({ endpoint: undefined, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });
  });
});
