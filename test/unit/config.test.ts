// The one configuration loader (shared/config.ts): no I/O.
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { clusterTargetOf } from '../../shared/redis.js';

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration: the outbound fetcher', () => {
  it('takes OUTBOUND_DNS_SERVERS as addresses with optional ports, the system\'s when unset, and refuses anything else naming it', () => {
    expect(loadConfig({}).outbound).to.deep.equal({ dnsServers: [], perOwner: 8 });
    expect(loadConfig({ OUTBOUND_DNS_SERVERS: '10.0.0.2, 127.0.0.1:5353,[fd00::53]:53,fd00::54', OUTBOUND_PER_OWNER: '3' }).outbound).to.deep.equal({
      dnsServers: ['10.0.0.2', '127.0.0.1:5353', '[fd00::53]:53', 'fd00::54'],
      perOwner: 3,
    });
    for (const bad of ['dns.example.com', '10.0.0.2:99999', '[nope]:53', '10.0.0.2:x']) expect(configError({ OUTBOUND_DNS_SERVERS: bad }), bad).to.include('OUTBOUND_DNS_SERVERS');
    expect(loadConfig({}).eventDelivery.perOwner).to.equal(8);
  });
});

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

describe('configuration loader', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c.roles).to.deep.equal(['api', 'gateway', 'worker']);
    expect(c.port).to.equal(3000);
    expect(c.publicBaseUrl).to.equal('http://localhost:3000');
    expect(c.databaseUrl).to.equal('postgres://postgres@127.0.0.1:5432/axid');
    expect(c.rateLimit).to.deep.equal({ points: 1200, duration: 60 });
    expect(c.trackerHosts).to.deep.equal(['linear.app']);
    expect(c.codeHosts).to.deep.equal(['github.com']);
    expect(c.s3).to.include({ region: 'us-east-1', bucket: 'axid-files', forcePathStyle: true });
  });

  it('reports every bad variable at once', () => {
    let err: unknown;
    try {
      loadConfig({ PORT: 'x', BOOTSTRAP_ADMIN_KEY: 'short', S3_FORCE_PATH_STYLE: 'maybe', LOG_LEVEL: 'loud' });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ConfigError);
    for (const name of ['PORT', 'BOOTSTRAP_ADMIN_KEY', 'S3_FORCE_PATH_STYLE', 'LOG_LEVEL']) {
      expect((err as Error).message).to.include(name);
    }
  });
});

describe('configuration: MIGRATE_ON_START', () => {
  it('is on unless set to false or 0, and refuses other values', () => {
    expect(loadConfig({}).migrateOnStart).to.equal(true);
    expect(loadConfig({ MIGRATE_ON_START: 'true' }).migrateOnStart).to.equal(true);
    expect(loadConfig({ MIGRATE_ON_START: 'false' }).migrateOnStart).to.equal(false);
    expect(loadConfig({ MIGRATE_ON_START: '0' }).migrateOnStart).to.equal(false);
    expect(() => loadConfig({ MIGRATE_ON_START: 'no' })).to.throw(ConfigError, /MIGRATE_ON_START/);
  });
});

describe('configuration: FEATURE_LEVEL', () => {
  it('is 2 unless set to 3, and refuses any other value', () => {
    expect(loadConfig({}).featureLevel).to.equal(2);
    expect(loadConfig({ FEATURE_LEVEL: '3' }).featureLevel).to.equal(3);
    expect(loadConfig({ FEATURE_LEVEL: '2' }).featureLevel).to.equal(2);
    for (const bad of ['1', '4', 'three']) expect(() => loadConfig({ FEATURE_LEVEL: bad })).to.throw(ConfigError, /FEATURE_LEVEL/);
  });
});

describe('configuration: TRUSTED_PROXIES and dependency bounds', () => {
  it('trusts no proxy by default, and reads a list of addresses/CIDRs/names or a hop count', () => {
    expect(loadConfig({}).trustedProxies).to.deep.equal([]);
    expect(loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1 ,fd00::/8,loopback' }).trustedProxies).to.deep.equal(['10.0.0.0/8', '127.0.0.1', 'fd00::/8', 'loopback']);
    expect(loadConfig({ TRUSTED_PROXIES: '2' }).trustedProxies).to.equal(2);
  });

  it('refuses what is neither, naming the entry', () => {
    expect(configError({ TRUSTED_PROXIES: '10.0.0.0/8, ingress.local' })).to.match(/TRUSTED_PROXIES: "ingress.local" is not an address/);
    expect(configError({ TRUSTED_PROXIES: '300.1.1.1' })).to.match(/TRUSTED_PROXIES/);
  });

  it('bounds Postgres statements at 5 s and Redis commands at 2 s unless told otherwise', () => {
    expect(loadConfig({})).to.include({ dbStatementTimeoutMs: 5000, redisCommandTimeoutMs: 2000 });
    expect(loadConfig({ DB_STATEMENT_TIMEOUT_MS: '800', REDIS_COMMAND_TIMEOUT_MS: '300' })).to.include({ dbStatementTimeoutMs: 800, redisCommandTimeoutMs: 300 });
    expect(configError({ DB_STATEMENT_TIMEOUT_MS: '0' })).to.match(/DB_STATEMENT_TIMEOUT_MS/);
  });
});

describe('configuration: Redis Cluster, event bus, presence', () => {
  it('turns REDIS_CLUSTER_NODES into a cluster address, with the credentials and TLS of REDIS_URL', () => {
    const plain = loadConfig({ REDIS_CLUSTER_NODES: 'a.internal:7000, b.internal:7001' });
    expect(plain.redisCluster).to.equal(true);
    expect(plain.redisUrlIsDefault).to.equal(false);
    expect(clusterTargetOf(plain.redisUrl)).to.deep.equal({ tls: false, nodes: [{ host: 'a.internal', port: 7000 }, { host: 'b.internal', port: 7001 }] });
    const managed = loadConfig({ REDIS_CLUSTER_NODES: 'c.cache.example:6379', REDIS_URL: 'rediss://:s%40cret@c.cache.example:6379' });
    expect(clusterTargetOf(managed.redisUrl)).to.deep.equal({ tls: true, username: 'default', password: 's@cret', nodes: [{ host: 'c.cache.example', port: 6379 }] });
    expect(loadConfig({}).redisCluster).to.equal(false);
  });

  it('refuses a node that is not host:port and bounds EVENT_SHARDS and PRESENCE_TTL_SECONDS', () => {
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'a.internal' })).to.throw(ConfigError, /REDIS_CLUSTER_NODES: "a.internal" is not host:port/);
    expect(() => loadConfig({ EVENT_SHARDS: '0' })).to.throw(ConfigError, /EVENT_SHARDS/);
    expect(() => loadConfig({ PRESENCE_TTL_SECONDS: '60' })).to.throw(ConfigError, /PRESENCE_TTL_SECONDS/);
    const c = loadConfig({});
    expect([c.eventShards, c.streamRetentionSeconds, c.presenceTtlSeconds]).to.deep.equal([1, 600, 30]);
  });
});
