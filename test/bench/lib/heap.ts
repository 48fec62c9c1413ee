// Allocation per request (BENCH_HEAP_SAMPLE=1): the server processes of
// scenario 1 run with --inspect on a loopback port, and around one measured
// run the bench asks V8's sampling heap profiler, through the DevTools
// protocol, for every allocation it sampled, those collected since included
// (garbage is what costs a post its collections). Reported per request and by
// package or file.
import WebSocket from 'ws';

export const heapSampling = process.env.BENCH_HEAP_SAMPLE === '1';

/** Node flags that open the inspector on a free loopback port (its address is printed on stderr). */
export const inspectFlags = () => (heapSampling ? ['--inspect=127.0.0.1:0'] : []);

/** The inspector's WebSocket address from a process's output. */
export const inspectorUrl = (output: string) => /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1] ?? null;

interface ProfileNode {
  callFrame: { functionName: string; url: string };
  selfSize: number;
  children: ProfileNode[];
}

export interface HeapSample {
  bytes: number;
  /** The largest allocators: package (node_modules/<name>), node's own code, or the file. */
  top: { where: string; bytes: number }[];
}

function whereOf(url: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return url;
  if (!url) return '(V8 / native)';
  const repo = /\/(services|shared)\/(.*)$/.exec(url);
  return repo ? `${repo[1]}/${repo[2]}` : url;
}

export async function sampleHeap<T>(wsUrl: string, run: () => Promise<T>): Promise<{ result: T; sample: HeapSample }> {
  const ws = new WebSocket(wsUrl);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let id = 0;
  const pending = new Map<number, (result: unknown) => void>();
  ws.on('message', (data) => {
    const msg = JSON.parse(String(data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result);
  });
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve) => {
      pending.set(++id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  try {
    await call('HeapProfiler.enable');
    await call('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    const result = await run();
    const { profile } = (await call('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
    const byWhere = new Map<string, number>();
    let bytes = 0;
    const walk = (node: ProfileNode) => {
      bytes += node.selfSize;
      const where = whereOf(node.callFrame.url);
      byWhere.set(where, (byWhere.get(where) ?? 0) + node.selfSize);
      node.children.forEach(walk);
    };
    walk(profile.head);
    const top = [...byWhere].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([where, n]) => ({ where, bytes: n }));
    return { result, sample: { bytes, top } };
  } finally {
    ws.close();
  }
}
