// What the bench runs and how long. Environment overrides are for trying
// things out; the committed results use the defaults.
const int = (name: string, fallback: number) => {
  const v = process.env[name];
  return v && /^\d+$/.test(v) ? Number(v) : fallback;
};

export const settings = {
  rounds: int('BENCH_ROUNDS', 3),
  /** Per side per round, scenarios 1, 2 and 7. */
  httpSeconds: int('BENCH_HTTP_SECONDS', 5),
  warmupSeconds: int('BENCH_WARMUP_SECONDS', 2),
  httpConnections: 50,
  historyRows: int('BENCH_HISTORY_ROWS', 100_000),
  /** Scenario 3 and 5: streams on one gateway, shared by sseUsers users. */
  sseConnections: int('BENCH_SSE_CONNECTIONS', 10_000),
  sseUsers: 100,
  sseClientProcesses: 2,
  /**
   * Scenario 5: the server's RSS is read once it has not fallen for this long
   * (at most settleMaxSeconds). 16 s read the gateway between two of V8's
   * steps about half the time (13.7 to 17.7 KB per stream against 9.1 to
   * 10.1 once V8 was done); 30 s waits them out on every side.
   */
  settleSeconds: int('BENCH_SETTLE_SECONDS', 30),
  settleMaxSeconds: 90,
  fanoutRate: 10,
  fanoutSeconds: int('BENCH_FANOUT_SECONDS', 5),
  /** Scenario 4: e2eChannels channels of one user each, e2eConnections streams in all. */
  e2eConnections: int('BENCH_E2E_CONNECTIONS', 10_000),
  e2eChannels: 100,
  e2eRate: 200,
  e2eSeconds: int('BENCH_E2E_SECONDS', 5),
  uploadBytes: int('BENCH_UPLOAD_BYTES', 100 * 1024 * 1024),
  /** Scenario 9: streams over two gateways, channels, posts/s through the API, posting time per configuration and round. */
  scaleStreams: int('BENCH_SCALE_STREAMS', 10_000),
  scaleChannels: 200,
  scaleRate: int('BENCH_SCALE_RATE', 200),
  scaleSeconds: int('BENCH_SCALE_SECONDS', 10),
  /**
   * Scenario 9: which channels' members each gateway serves. `shard`: gateway
   * A the channels of bus shard 1 (at EVENT_SHARDS=4), B those of shard 2,
   * shard 3's members have no stream (each gateway's channels a third of
   * all); `half`: A channels 0-99, B 100-199 (each gateway's channels on
   * every shard).
   */
  scaleLayout: process.env.BENCH_SCALE_LAYOUT === 'half' ? ('half' as const) : ('shard' as const),
  /** Comma list of scenario numbers to run (default: all). */
  only: (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => n > 0),
};
