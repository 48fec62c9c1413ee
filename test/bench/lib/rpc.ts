// Request/response over a child's IPC channel: the load generators are
// separate processes that the orchestrator drives step by step.
import type { ChildProcess } from 'node:child_process';

interface Reply {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

/** Child side: answers `{id, cmd, args}` with the handler's result. */
export function serve(handlers: Record<string, (args: never) => unknown>): void {
  process.on('message', (msg: { id: number; cmd: string; args: unknown }) => {
    const handler = handlers[msg.cmd];
    void (async () => {
      try {
        if (!handler) throw new Error(`unknown command ${msg.cmd}`);
        const result = await handler(msg.args as never);
        process.send!({ id: msg.id, ok: true, result } satisfies Reply);
      } catch (err) {
        process.send!({ id: msg.id, ok: false, error: (err as Error).message } satisfies Reply);
      }
    })();
  });
  // The orchestrator went away: nothing left to do.
  process.on('disconnect', () => process.exit(0));
  process.send!({ id: 0, ok: true, result: 'ready' } satisfies Reply);
}

/** Parent side. */
export class Rpc {
  private next = 1;
  private pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  readonly ready: Promise<void>;

  constructor(
    private readonly child: ChildProcess,
    private readonly name: string,
  ) {
    let markReady!: () => void;
    this.ready = new Promise((r) => (markReady = r));
    child.on('message', (msg: Reply) => {
      if (msg.id === 0) return markReady();
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.ok) p.resolve(msg.result);
      else p.reject(new Error(`${this.name}: ${msg.error}`));
    });
    // A send to a child that is gone (cleanup stopped it while a scenario was still asking) is an error event: a rejected call, not a crash.
    child.on('error', (err) => {
      for (const p of this.pending.values()) p.reject(new Error(`${this.name}: ${err.message}`));
      this.pending.clear();
    });
    child.once('exit', (code) => {
      for (const p of this.pending.values()) p.reject(new Error(`${this.name} exited (${code})`));
      this.pending.clear();
    });
  }

  call<T>(cmd: string, args: unknown = {}, timeoutMs = 120_000): Promise<T> {
    const id = this.next++;
    if (!this.child.connected) return Promise.reject(new Error(`${this.name} is gone`));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.name}: ${cmd} timed out after ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.child.send({ id, cmd, args });
    });
  }
}
